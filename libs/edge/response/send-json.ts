import type { Response } from 'express';
import { jsonBytes } from '#core/protocol/frozen-json.js';

/**
 * A success body, written directly: express's `res.json` would also hash the
 * whole body for an ETag, which a POST answer never uses.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  writeJson(res, status, body);
}

/** `sendJson` that returns the bytes written, for a caller that records the size without serializing again. */
export function writeJson(res: Response, status: number, body: unknown): number {
  // A response echoes its declared tools: a kept list's bytes are copied in rather than serialized and encoded again.
  const bytes = jsonBytes(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': bytes.length });
  res.end(bytes);
  return bytes.length;
}
