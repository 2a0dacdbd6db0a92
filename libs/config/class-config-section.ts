import { plainToInstance } from 'class-transformer';
import { type ValidationError, validateSync } from 'class-validator';
import type { ConfigSection, KeyShape } from './config-section.js';
import type { GatewayConfig } from './gateway-config.js';
import { declaredProperties, unknownKeysByClass } from './unknown-keys.js';
import { gotPart, violations } from './validation-messages.js';

type SectionClass<T extends object> = new () => T;

/**
 * Settings whose value never appears in a message (keys, secrets, passwords):
 * a property named like a credential.
 */
export const SECRET_SETTING = /(key|keys|secret|password|token|(redis|postgres|nats|database)url)$/i;

/** One line per wrong value: `path: must be <expected> (got <value>)`. */
export function describeViolations(errors: ValidationError[], prefix: string): string[] {
  return violations(errors, prefix).map((v) => `${v.path}: ${v.message}${gotPart(v.value, SECRET_SETTING.test(v.path))}`);
}

/** The keys a flat class-validator section accepts: its decorated properties. */
export function classSectionKeys<T extends object>(type: SectionClass<T>): KeyShape {
  return Object.fromEntries(declaredProperties(type).map((name) => [name, true as const]));
}

/**
 * Validates a section held by a class-validator class: the class's field
 * initialisers are the defaults, each failed rule one line naming
 * `key.setting` (the loader adds the environment variable that fills it).
 * `extra` checks rules that tie the section's settings together.
 */
export function parseClassSection<T extends object>(key: string, type: SectionClass<T>, section: unknown, extra?: (settings: T) => string[]): T {
  if (section instanceof type) return section;
  if (section !== undefined && section !== null && (typeof section !== 'object' || Array.isArray(section))) {
    throw new Error(`Invalid configuration: ${key} must be an object of settings (got ${JSON.stringify(section)})`);
  }
  const settings = plainToInstance(type, section ?? {}, { exposeDefaultValues: true });
  // Unknown keys and wrong values together, so that one pass names every problem.
  const problems = [...unknownKeysByClass(section, settings, key), ...describeViolations(validateSync(settings, { forbidUnknownValues: false }), key)];
  // Rules across settings too, in the same pass (each guards against the values the decorators refused).
  problems.push(...(extra?.(settings) ?? []));
  if (problems.length === 1) throw new Error(`Invalid configuration: ${problems[0]}`);
  if (problems.length > 1) throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  return settings;
}

/** A section held by a class-validator class: `parse` checks a raw section, `read` a gateway config's. */
export interface ClassConfigSection<T extends object> extends ConfigSection<T> {
  readonly parse: (section: unknown) => T;
  /** The section's settings of a gateway config, for code that runs outside the Nest container. */
  readonly read: (config: GatewayConfig) => T;
}

/**
 * Declares a section whose settings are a class-validator class (see
 * `parseClassSection`); its keys are the class's properties unless `keys`
 * says more (a nested class's own keys).
 */
export function defineClassSection<T extends object>(
  options: Omit<ConfigSection<T>, 'keys' | 'parse'> & { type: SectionClass<T>; keys?: KeyShape; extra?: (settings: T) => string[] },
): ClassConfigSection<T> {
  const { type, extra, keys, ...section } = options;
  const parse = (raw: unknown): T => parseClassSection(section.key, type, raw, extra);
  return { ...section, keys: keys ?? classSectionKeys(type), parse, read: (config) => parse(config[section.key]) };
}
