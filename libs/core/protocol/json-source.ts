/**
 * The UTF-8 bytes a parsed JSON value was read from, when the HTTP body
 * parser knows them (the body's shape scan finds where the top-level `tools`
 * array begins and ends). Same bytes, same value: the tool preparation keys
 * its cache on them instead of serializing the declarations again, and
 * prepares a missed list from them. Keyed by the parsed value, so the bytes
 * live as long as that one request's body; set only right after parsing, on
 * a body the gateway does not change afterwards (as the shape and
 * storable-text marks on it are).
 */
const sources = new WeakMap<object, Uint8Array>();

export function noteJsonSource(value: object, bytes: Uint8Array): void {
  sources.set(value, bytes);
}

export function jsonSourceOf(value: object): Uint8Array | undefined {
  return sources.get(value);
}
