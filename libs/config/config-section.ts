import type { FactoryProvider } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { GATEWAY_CONFIG, GatewayConfig } from './gateway-config.js';
import { declaredProperties, unknownKeysByShape } from './unknown-keys.js';
import { SECRET_SETTING, gotPart, violations } from './validation-messages.js';

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

type SettingsClass<S extends object> = new () => S;

/**
 * How a module declares its top-level section of the gateway configuration:
 * a class-validator class whose decorated properties are the section's keys
 * and whose field initialisers are its defaults. The loader assembles the
 * sections of the modules present (their environment variables, their key
 * check, their validation), so that boot fails on a bad setting before any
 * module starts. `W` is the section as written (the class, or a map of its
 * entries), `T` the settings the module is given.
 */
interface SectionDeclarationBase<W, T> {
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
  /**
   * The keys the section accepts. Unset: the class's decorated properties,
   * and those of each nested class its defaults hold. Say it where the
   * classes cannot: a nested class with no default instance, a list of
   * objects, a map.
   */
  readonly keys?: KeyShape;
  /** `null` for a setting means its default (a section that took `null` that way before it had a class). */
  readonly nullMeansDefault?: boolean;
  /** Never quote a value in a message: every value of the section may be a credential (headers, environments). */
  readonly secretValues?: boolean;
  /**
   * Rules the decorators cannot say (across settings, across entries, files
   * that must exist), checked in the same pass as the decorators: one line per
   * problem, `key.setting: ...`. Each guards against values the decorators
   * refused. `config` is the whole gateway config when the loader checks it.
   */
  readonly check?: (written: W, config: GatewayConfig | undefined) => string[];
  /**
   * The settings the module is given, from the validated section (defaults
   * of other sections resolved, a value normalised). Unset: the validated
   * section itself. `config` is the whole gateway config (its defaults when
   * the section is parsed alone).
   */
  readonly settings?: (written: W, config: GatewayConfig) => T;
}

/** A section whose settings are one class-validator class. */
export interface ClassSectionDeclaration<S extends object, T> extends SectionDeclarationBase<S, T> {
  readonly type: SettingsClass<S>;
}

/** A section that maps names of the operator's choosing to entries of one class (`models`). */
export interface EntriesSectionDeclaration<S extends object, T> extends SectionDeclarationBase<Record<string, S>, T> {
  readonly entryType: SettingsClass<S>;
}

/** Marks what `defineConfigSection` made, so that no section is assembled by hand beside it. */
const DECLARED = Symbol('switchyard:declared-config-section');

/**
 * A declared section, as the loader and the Nest container use it (made by
 * `defineConfigSection`, provided by `registerConfigSection`).
 */
export interface ConfigSection<T = unknown> {
  readonly [DECLARED]: true;
  readonly key: string;
  readonly token: symbol;
  readonly env?: readonly SectionEnvSetting[];
  readonly fromEnv?: (env: Env) => Record<string, unknown> | undefined;
  readonly fromDataDir?: (dataDir: string) => Record<string, unknown>;
  readonly secretEnv?: readonly string[];
  /** The keys the section accepts; `parse` is not reached while one is unknown. */
  readonly keys: KeyShape;
  /**
   * Validates the section as written (`undefined` when it is absent) and
   * returns the settings the module uses. Throws an error whose message names
   * every wrong setting, one per line after the first.
   */
  readonly parse: (section: unknown, config?: GatewayConfig) => T;
  /** The section's settings of a gateway config, for code that runs outside the Nest container. */
  readonly read: (config: GatewayConfig) => T;
}

/** The keys a class declares, with those of each nested class its defaults hold. */
export function classSectionKeys(type: Function): { readonly [key: string]: KeyShape } {
  const defaults = instanceOf(type);
  return Object.fromEntries(
    declaredProperties(type).map((name) => {
      const value = defaults?.[name];
      const nested = isClassValue(value) ? classSectionKeys(value.constructor) : undefined;
      return [name, nested && Object.keys(nested).length > 0 ? nested : (true as const)];
    }),
  );
}

function instanceOf(type: Function): Record<string, unknown> | undefined {
  try {
    return new (type as new () => Record<string, unknown>)();
  } catch {
    return undefined;
  }
}

const isClassValue = (value: unknown): value is object => !!value && typeof value === 'object' && !Array.isArray(value) && value.constructor !== Object;

const isPlainObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

/** `null` as "the default": left out, at any depth. */
function withoutNulls(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (v === null ? [] : [[k, withoutNulls(v)]])));
}

function invalid(problems: readonly string[]): Error | undefined {
  if (problems.length === 0) return undefined;
  const unique = [...new Set(problems)];
  return new Error(unique.length === 1 ? `Invalid configuration: ${unique[0]}` : `Invalid configuration:\n  ${unique.join('\n  ')}`);
}

/** One value as a class instance, its unknown keys and wrong values as lines under `path`. */
function validated<S extends object>(type: SettingsClass<S>, raw: unknown, path: string, keys: KeyShape, quote: boolean): { value: S; problems: string[] } {
  const value = plainToInstance(type, raw ?? {}, { exposeDefaultValues: true });
  const wrong = violations(validateSync(value, { forbidUnknownValues: false }), path).map(
    (v) => `${v.path}: ${v.message}${quote ? gotPart(v.value, SECRET_SETTING.test(v.path)) : ''}`,
  );
  return { value, problems: [...unknownKeysByShape(raw, keys, path), ...wrong] };
}

/** A map of named entries, each validated as one `type` under `key.name`. */
function validatedEntries<S extends object>(type: SettingsClass<S>, raw: unknown, key: string, keys: KeyShape, quote: boolean): { written: Record<string, S>; problems: string[] } {
  const entryKeys = isPlainObject(keys) && keys['*'] !== undefined ? keys['*'] : true;
  const written: Record<string, S> = {};
  const problems: string[] = [];
  for (const [name, entry] of Object.entries((raw ?? {}) as Record<string, unknown>)) {
    if (!isPlainObject(entry)) {
      problems.push(`${key}.${name} must be an object of settings${quote ? gotPart(entry) : ''}`);
      continue;
    }
    const one = validated(type, entry, `${key}.${name}`, entryKeys, quote);
    written[name] = one.value;
    problems.push(...one.problems);
  }
  return { written, problems };
}

/**
 * Declares a module's config section (see `ClassSectionDeclaration`): the
 * one way a section is declared, for the built-in modules and plugins alike.
 * Its `parse` reports unknown keys, wrong values and `check`'s rules in one
 * pass, each line naming `key.setting` (the loader adds the environment
 * variable that fills it).
 */
export function defineConfigSection<S extends object, T = S>(declaration: ClassSectionDeclaration<S, T>): ConfigSection<T>;
export function defineConfigSection<S extends object, T = Record<string, S>>(declaration: EntriesSectionDeclaration<S, T>): ConfigSection<T>;
export function defineConfigSection(declaration: ClassSectionDeclaration<object, unknown> | EntriesSectionDeclaration<object, unknown>): ConfigSection {
  const { key, token, env, fromEnv, fromDataDir, secretEnv } = declaration;
  const byEntry = 'entryType' in declaration;
  const type = byEntry ? declaration.entryType : declaration.type;
  const keys: KeyShape = declaration.keys ?? (byEntry ? { '*': classSectionKeys(type) } : classSectionKeys(type));
  const quote = declaration.secretValues !== true;
  const check = declaration.check as ((written: unknown, config: GatewayConfig | undefined) => string[]) | undefined;
  const resolve = declaration.settings as ((written: unknown, config: GatewayConfig) => unknown) | undefined;
  const settings = resolve && ((written: unknown, config: GatewayConfig | undefined) => resolve(written, config ?? new GatewayConfig()));
  const validate = (raw: unknown): { written: unknown; problems: string[] } => {
    if (raw !== undefined && raw !== null && !isPlainObject(raw)) {
      const what = byEntry ? 'an object of named entries' : 'an object of settings';
      return { written: undefined, problems: [`${key} must be ${what}${quote ? gotPart(raw) : ''}`] };
    }
    const section = declaration.nullMeansDefault ? withoutNulls(raw) : raw;
    if (!byEntry) {
      const { value, problems } = validated(type, section, key, keys, quote);
      return { written: value, problems };
    }
    return validatedEntries(type, section, key, keys, quote);
  };
  const parse = (raw: unknown, config?: GatewayConfig): unknown => {
    if (!byEntry && raw instanceof type) return settings ? settings(raw, config) : raw;
    const { written, problems } = validate(raw);
    // Rules across settings run beside the decorators' findings, so that one pass names every problem.
    if (written !== undefined) problems.push(...(check?.(written, config) ?? []));
    const error = invalid(problems);
    if (error) throw error;
    return settings ? settings(written, config) : written;
  };
  return { [DECLARED]: true, key, token, env, fromEnv, fromDataDir, secretEnv, keys, parse, read: (config) => parse(config[key], config) };
}

const SECTION_PROVIDER = Symbol('switchyard:config-section');

type SectionProvider<T> = FactoryProvider<T> & { [SECTION_PROVIDER]: ConfigSection<T> };

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
