import { readConfigFile } from '#config/config.loader.js';

/**
 * The plugins to load: the config file's `plugins`, `SWITCHYARD_PLUGINS`
 * (comma-separated), then `--plugin` flags, each named once. They are known
 * before the configuration is validated, because a plugin's modules may
 * bring config sections of their own.
 */
export function pluginSpecifiers(options: { env: Record<string, string | undefined>; configFile?: string; flags?: readonly string[] }): string[] {
  const file = options.configFile ?? options.env.SWITCHYARD_CONFIG;
  const fromFile = file ? readConfigFile(file, options.configFile === undefined ? 'SWITCHYARD_CONFIG' : undefined).plugins : undefined;
  const listed = Array.isArray(fromFile) ? fromFile.filter((p): p is string => typeof p === 'string') : [];
  const fromEnv = (options.env.SWITCHYARD_PLUGINS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return [...new Set([...listed, ...fromEnv, ...(options.flags ?? [])])];
}
