import { plainToInstance } from 'class-transformer';
import { type ValidationError, validateSync } from 'class-validator';
import type { KeyShape } from './config-section.js';
import { declaredProperties } from './unknown-keys.js';

type SectionClass<T extends object> = new () => T;

function describe(errors: ValidationError[], prefix: string): string[] {
  return errors.flatMap((e) => {
    const path = `${prefix}.${e.property}`;
    const here = Object.values(e.constraints ?? {}).map((m) => `${path}: ${m} (got ${JSON.stringify(e.value)})`);
    return [...here, ...describe(e.children ?? [], path)];
  });
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
  const problems = describe(validateSync(settings, { forbidUnknownValues: false }), key);
  if (problems.length === 0) problems.push(...(extra?.(settings) ?? []));
  if (problems.length === 1) throw new Error(`Invalid configuration: ${problems[0]}`);
  if (problems.length > 1) throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  return settings;
}
