import { hash } from 'node:crypto';

/**
 * A value with the bytes it was read from (the HTTP body reader's: see
 * `ScannedBody`), carried with the value by whoever hands it on.
 */
export type { JsonSource } from '#tool-sdk/routes/scanned-body.js';

/**
 * What identifies a JSON text's content: the same for the same bytes, whoever sent them.
 * The one-shot `hash` (a quarter of a `Hash` object's cost for a small text): it runs once per
 * request that declares tools.
 */
export function contentDigest(json: string | Uint8Array): string {
  return hash('sha256', json, 'base64');
}
