import type { Response } from 'express';
import { stringifyJson } from '#core/protocol/frozen-json.js';

/**
 * A success body, written directly: express's `res.json` would also hash the
 * whole body for an ETag, which a POST answer never uses.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  writeJson(res, status, body);
}

/** `sendJson` that returns the bytes written, for a caller that records the size without serializing again. */
export function writeJson(res: Response, status: number, body: unknown): number {
  // A response echoes its declared tools: a kept list's text is spliced in rather than serialized again.
  const json = stringifyJson(body);
  const bytes = Buffer.byteLength(json);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': bytes });
  res.end(json);
  return bytes;
}
