import { createHash } from 'node:crypto';

/**
 * The UTF-8 bytes a parsed JSON value was read from, when the HTTP body
 * parser knows them (the body's shape scan finds where the top-level `tools`
 * array begins and ends), and their digest. Same bytes, same value: the tool
 * preparation keys its cache on the digest instead of serializing the
 * declarations again, and prepares a missed list from the bytes. Keyed by
 * the parsed value, so the bytes live as long as that value; set only right
 * after parsing, on a body the gateway does not change afterwards (as the
 * shape and storable-text marks on it are).
 */
const sources = new WeakMap<object, { bytes: Uint8Array; digest: string }>();

/** What identifies a JSON text's content: the same for the same bytes, whoever sent them. */
export function contentDigest(json: string | Uint8Array): string {
  return createHash('sha256').update(json).digest('base64');
}

export function noteJsonSource(value: object, bytes: Uint8Array, digest: string = contentDigest(bytes)): void {
  sources.set(value, { bytes, digest });
}

export function jsonSourceOf(value: object): { bytes: Uint8Array; digest: string } | undefined {
  return sources.get(value);
}
