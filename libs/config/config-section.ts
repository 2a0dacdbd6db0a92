import type { FactoryProvider } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from './gateway-config.js';

export type Env = Record<string, string | undefined>;

/** One environment variable and the setting it fills, as a path inside its section. */
export interface SectionEnvSetting {
  env: string;
  path: string;
  kind: 'string' | 'int' | 'list' | 'bool';
  /**
   * A credential (a key, a password-bearing URL): once the config is loaded
   * it is taken out of `process.env`, so no child process inherits it.
   */
  secret?: boolean;
}

/**
 * The keys a section accepts, so that a typo is refused with the closest
 * valid name. `true`: any value (a leaf, or an object the section reads as a
 * map). An object: exactly these keys, `'*'` standing for any key. A
 * one-element array: a list whose entries have that shape.
 */
export type KeyShape = true | { readonly [key: string]: KeyShape } | readonly [KeyShape];

/**
 * A top-level section of the gateway configuration, owned by the module that
 * reads it. The loader assembles the sections of the modules present: their
 * environment variables, their key check, and their validation, so that boot
 * fails on a bad setting before any module starts.
 */
export interface ConfigSection<T = unknown> {
  /** The section's key in a config file (`mcp`, `webSearch`, ...). */
  readonly key: string;
  /** Nest token under which the validated settings are provided. */
  readonly token: symbol;
  /** Environment variables that fill settings of this section. */
  readonly env?: readonly SectionEnvSetting[];
  /** Settings whose place only the environment's values name (e.g. keys under a provider's name). */
  readonly fromEnv?: (env: Env) => Record<string, unknown> | undefined;
  /**
   * Defaults of the section's writable paths under the gateway's data
   * directory (`server.dataDir`, `SWITCHYARD_DATA_DIR`), so that one setting
   * moves every file the gateway writes. Settings given explicitly win.
   */
  readonly fromDataDir?: (dataDir: string) => Record<string, unknown>;
  /** Credentials among the variables `fromEnv` reads (see `SectionEnvSetting.secret`). */
  readonly secretEnv?: readonly string[];
  /** The keys the section accepts; `parse` is not reached while one is unknown. */
  readonly keys: KeyShape;
  /**
   * Validates the section (`undefined` when it is absent) and returns the
   * settings the module uses. Throws an error whose message names the setting;
   * lines after the first are separate problems.
   */
  readonly parse: (section: unknown, config: GatewayConfig) => T;
}

const SECTION_PROVIDER = Symbol('switchyard:config-section');

type SectionProvider<T> = FactoryProvider<T> & { [SECTION_PROVIDER]: ConfigSection<T> };

export function defineConfigSection<T>(section: ConfigSection<T>): ConfigSection<T> {
  return section;
}

/**
 * The provider of a section's validated settings. A module lists it among its
 * providers; that is also how the loader finds the section among the modules
 * present (see `configSectionsOf`).
 */
export function registerConfigSection<T>(section: ConfigSection<T>): FactoryProvider<T> {
  const provider: SectionProvider<T> = {
    provide: section.token,
    inject: [GATEWAY_CONFIG],
    useFactory: (config: GatewayConfig) => section.parse(config[section.key], config),
    [SECTION_PROVIDER]: section,
  };
  return provider;
}

type ModuleRef = unknown;

function metadataList(target: unknown, key: 'imports' | 'providers'): unknown[] {
  if (typeof target !== 'function') return [];
  return (Reflect.getMetadata(key, target) as unknown[] | undefined) ?? [];
}

/**
 * The sections registered by these modules and every module they import,
 * read from their `@Module` metadata (and a dynamic module's own lists), so
 * that the set follows what the application really loads.
 */
export function configSectionsOf(modules: readonly ModuleRef[]): ConfigSection[] {
  const seen = new Set<unknown>();
  const sections = new Map<string, ConfigSection>();
  const visit = (ref: ModuleRef): void => {
    if (!ref || seen.has(ref)) return;
    seen.add(ref);
    const dynamic = typeof ref === 'object' ? (ref as { module?: unknown; imports?: unknown[]; providers?: unknown[] }) : undefined;
    const moduleClass = dynamic ? dynamic.module : ref;
    const providers = [...metadataList(moduleClass, 'providers'), ...(dynamic?.providers ?? [])];
    for (const provider of providers) {
      const section = (provider as Partial<SectionProvider<unknown>> | undefined)?.[SECTION_PROVIDER];
      if (!section) continue;
      const other = sections.get(section.key);
      if (other && other !== section) throw new Error(`Two modules register the config section "${section.key}".`);
      sections.set(section.key, section);
    }
    for (const imported of [...metadataList(moduleClass, 'imports'), ...(dynamic?.imports ?? [])]) visit(imported);
  };
  modules.forEach(visit);
  return [...sections.values()];
}
