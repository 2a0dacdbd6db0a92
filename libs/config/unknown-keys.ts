import { getMetadataStorage } from 'class-validator';
import type { KeyShape } from './config-section.js';

/** Levenshtein distance, case-insensitive: `upstrem` is one edit from `upstream`. */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[y.length];
}

/**
 * The valid name a typo most likely meant. Beyond half the key's length the
 * names have little in common, and a suggestion would mislead more than help.
 */
export function closestName(key: string, names: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(key, name);
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= Math.max(2, Math.ceil(key.length / 2)) ? best.name : undefined;
}

export function unknownKeyMessage(path: string, key: string, names: readonly string[]): string {
  const full = path ? `${path}.${key}` : key;
  const near = closestName(key, names);
  const hint = near ? ` (did you mean "${path ? `${path}.${near}` : near}"?)` : ` (known: ${names.join(', ')})`;
  return `unknown config key "${full}"${hint}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

/** Every key of `value` the shape does not allow, at any depth. */
export function unknownKeysByShape(value: unknown, shape: KeyShape, path: string): string[] {
  if (shape === true || value === undefined || value === null) return [];
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return [];
    return value.flatMap((entry, i) => unknownKeysByShape(entry, shape[0], `${path}[${i}]`));
  }
  if (!isPlainObject(value)) return [];
  const object = shape as { readonly [key: string]: KeyShape };
  const names = Object.keys(object).filter((k) => k !== '*');
  return Object.entries(value).flatMap(([key, inner]) => {
    const innerShape = object[key] ?? object['*'];
    if (innerShape === undefined) return [unknownKeyMessage(path, key, names)];
    return unknownKeysByShape(inner, innerShape, path ? `${path}.${key}` : key);
  });
}

/**
 * The value with the keys the shape refuses left out, so that a section's
 * own check can still report its wrong values beside the unknown keys.
 */
export function knownKeysOnly(value: unknown, shape: KeyShape): unknown {
  if (shape === true || value === undefined || value === null) return value;
  if (Array.isArray(shape)) return Array.isArray(value) ? value.map((entry) => knownKeysOnly(entry, shape[0])) : value;
  if (!isPlainObject(value)) return value;
  const object = shape as { readonly [key: string]: KeyShape };
  const kept = Object.entries(value).flatMap(([key, inner]) => {
    const innerShape = object[key] ?? object['*'];
    return innerShape === undefined ? [] : [[key, knownKeysOnly(inner, innerShape)] as const];
  });
  return Object.fromEntries(kept);
}

/** The properties a class-validator class declares (its decorated ones). */
export function declaredProperties(target: Function): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(target, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))];
}

/**
 * Unknown keys of a plain object against the class instance it was turned
 * into: a nested class instance is checked against its own declared
 * properties; any other object (a map such as `timeoutMsByType`) is not.
 */
export function unknownKeysByClass(raw: unknown, instance: object, path: string, extraNames: readonly string[] = []): string[] {
  if (!isPlainObject(raw)) return [];
  const names = [...declaredProperties(instance.constructor), ...extraNames];
  return Object.entries(raw).flatMap(([key, inner]) => {
    if (!names.includes(key)) return [unknownKeyMessage(path, key, names)];
    if (extraNames.includes(key)) return [];
    const child = (instance as Record<string, unknown>)[key];
    const nested = isPlainObject(child) && child.constructor !== Object && declaredProperties(child.constructor).length > 0;
    return nested ? unknownKeysByClass(inner, child, path ? `${path}.${key}` : key) : [];
  });
}
