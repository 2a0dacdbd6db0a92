import { InvalidRequestError } from '#tool-sdk/errors.js';

/** The Responses API's metadata rules: at most 16 string pairs, keys up to 64 and values up to 512 characters. */
export function parseMetadata(value: unknown, param = 'metadata'): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidRequestError(`'${param}' must be an object of strings.`, param);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > 16) throw new InvalidRequestError(`'${param}' may have at most 16 keys.`, param);
  for (const [key, v] of entries) {
    if (key.length > 64) throw new InvalidRequestError(`${param} key "${key.slice(0, 20)}…" is longer than 64 characters.`, `${param}.${key}`);
    if (typeof v !== 'string' || v.length > 512) {
      throw new InvalidRequestError(`${param}.${key} must be a string of at most 512 characters.`, `${param}.${key}`);
    }
  }
  // A fresh object with own data properties: every key, `__proto__` and `constructor` included, stays data.
  return Object.fromEntries(entries) as Record<string, string>;
}
