import type { Response } from 'express';
import { chunksLength, endWithChunks, jsonChunks } from '#tool-sdk/helpers/frozen-json.js';

/**
 * A success body, written directly: express's `res.json` would also hash the
 * whole body for an ETag, which a POST answer never uses.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  writeJson(res, status, body);
}

/** `sendJson` that returns the bytes written, for a caller that records the size without serializing again. */
export function writeJson(res: Response, status: number, body: unknown): number {
  // A response echoes its declared tools, and an `output` item can hold a kept tool listing
  // (`output[i].tools`, three levels down): a kept list's bytes go out as they are kept rather
  // than serialized, encoded or copied again.
  const chunks = jsonChunks(body, 3);
  const bytes = chunksLength(chunks);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': bytes });
  endWithChunks(res, chunks);
  return bytes;
}
