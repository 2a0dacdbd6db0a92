import type { ConfigSection } from '#config/config-section.js';
import { ConfigError } from '#config/config.loader.js';
import { codeExecutionRefusal } from '#config/exposure.js';
import type { GatewayConfig } from '#config/gateway-config.js';
import { settingLikeVariables } from '#config/setting-like-env.js';
import { gatewayConfigSections, loadGatewayConfig } from '#src/gateway-config.loader.js';

export * from './cli-args.js';

/** `check-config`: every problem, one per line; the exit code says whether there were any. */
export function checkConfig(env: Record<string, string | undefined>, configFile?: string, sections?: readonly ConfigSection[]): { ok: boolean; lines: string[] } {
  // Variables that look like settings but are none: said as the boot says them, whether the rest is valid or not.
  const warnings = settingLikeVariables(env, sections ?? gatewayConfigSections()).map((w) => `warning: ${w}`);
  let config: GatewayConfig;
  try {
    // Every module section is validated by the loader (the plugins' too, when given), so this finds what starting the gateway would.
    config = loadGatewayConfig({ env, file: configFile, sections });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Each line is one problem; the heading is said by `error:` already.
    const lines = err.message
      .split('\n')
      .map((l) => l.trim().replace(/^Invalid configuration:\s*/, ''))
      .filter(Boolean);
    return { ok: false, lines: [...lines.map((l) => `error: ${l}`), ...warnings] };
  }
  const source = configFile ?? env.SWITCHYARD_CONFIG;
  const codeOff = codeExecutionRefusal(config);
  return {
    ok: true,
    lines: [
      `ok: ${source ? `${source} and the environment give` : 'the environment gives'} a valid configuration`,
      ...(codeOff ? [`warning: code execution is off: ${codeOff}`] : []),
      // Replicas that do not share the data directory must share the key of owner ids: say which one this is.
      ...(config.server.ownerIdSecret ? ['owner ids: keyed with OWNER_ID_SECRET (server.ownerIdSecret)'] : []),
      ...warnings,
    ],
  };
}
