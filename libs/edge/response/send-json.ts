import type { Response } from 'express';

/**
 * A success body, written directly: express's `res.json` would also hash the
 * whole body for an ETag, which a POST answer never uses.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
}
