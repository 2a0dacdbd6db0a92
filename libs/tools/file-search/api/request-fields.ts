import { InvalidRequestError, listQuery, requestBody } from '#tool-sdk/index.js';
import { AUTO_CHUNKING } from '../ingestion/ingestion-contract.js';
import type { Attributes, ChunkingStrategy, ExpiresAfter, PageQuery } from '../storage/file-search-rows.js';

/** Request-field checks for the Files and Vector Stores APIs; each failure names its field in `param`. */

export type Body = Record<string, unknown>;

/** OpenAI's own bound for `file_ids` in one request. */
export const MAX_FILE_IDS = 500;
const MAX_KEYS = 16;

/** The gateway's one body check (`requestBody`), so these routes answer as every other does. */
export function asBody(body: unknown): Body {
  return requestBody(body);
}

export function optionalString(body: Body, field: string, max = 4096): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length > max) throw new InvalidRequestError(`${field} must be a string of at most ${max} characters.`, field);
  return v;
}

export function optionalInt(body: Body, field: string, min: number, max: number, path = field): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new InvalidRequestError(`${path} must be an integer from ${min} to ${max}.`, path);
  return v;
}

export function fileIdList(value: unknown, path: string): string[] {
  if (!Array.isArray(value)) throw new InvalidRequestError(`${path} must be an array of file ids.`, path);
  if (value.length > MAX_FILE_IDS) throw new InvalidRequestError(`${path} may list at most ${MAX_FILE_IDS} files (got ${value.length}).`, path);
  value.forEach((id, i) => {
    if (typeof id !== 'string' || id === '') throw new InvalidRequestError(`${path}[${i}] must be a file id.`, `${path}[${i}]`);
  });
  return [...new Set(value as string[])];
}

export function metadata(value: unknown, path: string): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidRequestError(`${path} must be an object of strings.`, path);
  const entries = Object.entries(value as Body);
  if (entries.length > MAX_KEYS) throw new InvalidRequestError(`${path} may have at most ${MAX_KEYS} keys.`, path);
  for (const [k, v] of entries) {
    if (k.length > 64) throw new InvalidRequestError(`${path} keys are at most 64 characters.`, `${path}.${k}`);
    if (typeof v !== 'string' || v.length > 512) throw new InvalidRequestError(`${path}.${k} must be a string of at most 512 characters.`, `${path}.${k}`);
  }
  return value as Record<string, string>;
}

export function attributes(value: unknown, path: string): Attributes {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidRequestError(`${path} must be an object.`, path);
  const entries = Object.entries(value as Body);
  if (entries.length > MAX_KEYS) throw new InvalidRequestError(`${path} may have at most ${MAX_KEYS} keys.`, path);
  for (const [k, v] of entries) {
    if (k.length > 64) throw new InvalidRequestError(`${path} keys are at most 64 characters.`, `${path}.${k}`);
    const ok = (typeof v === 'string' && v.length <= 512) || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean';
    if (!ok) throw new InvalidRequestError(`${path}.${k} must be a string (at most 512 characters), a number or a boolean.`, `${path}.${k}`);
  }
  return value as Attributes;
}

export function chunkingStrategy(value: unknown, path: string, fallback: ChunkingStrategy = AUTO_CHUNKING): ChunkingStrategy {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidRequestError(`${path} must be an object.`, path);
  const v = value as Body;
  if (v.type === 'auto') return AUTO_CHUNKING;
  if (v.type !== 'static') throw new InvalidRequestError(`${path}.type must be "auto" or "static".`, `${path}.type`);
  const s = v.static;
  if (!s || typeof s !== 'object' || Array.isArray(s)) throw new InvalidRequestError(`${path}.static is required for a static strategy.`, `${path}.static`);
  const max = optionalInt(s as Body, 'max_chunk_size_tokens', 100, 4096, `${path}.static.max_chunk_size_tokens`);
  if (max === undefined) throw new InvalidRequestError(`${path}.static.max_chunk_size_tokens is required.`, `${path}.static.max_chunk_size_tokens`);
  const overlap = optionalInt(s as Body, 'chunk_overlap_tokens', 0, Math.floor(max / 2), `${path}.static.chunk_overlap_tokens`);
  if (overlap === undefined) throw new InvalidRequestError(`${path}.static.chunk_overlap_tokens is required.`, `${path}.static.chunk_overlap_tokens`);
  return { maxChunkSizeTokens: max, chunkOverlapTokens: overlap, auto: false };
}

export function storeExpiresAfter(value: unknown, path: string): ExpiresAfter | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidRequestError(`${path} must be an object.`, path);
  const v = value as Body;
  if (v.anchor !== 'last_active_at') throw new InvalidRequestError(`${path}.anchor must be "last_active_at".`, `${path}.anchor`);
  const days = optionalInt(v, 'days', 1, 365, `${path}.days`);
  if (days === undefined) throw new InvalidRequestError(`${path}.days is required.`, `${path}.days`);
  return { anchor: 'last_active_at', days };
}

/** Multipart forms carry `expires_after[anchor]` and `expires_after[seconds]` as flat fields. */
export function fileExpiresAfter(fields: Body): number | undefined {
  const nested = (fields.expires_after ?? {}) as Body;
  const anchor = fields['expires_after[anchor]'] ?? nested.anchor;
  const seconds = fields['expires_after[seconds]'] ?? nested.seconds;
  if (anchor === undefined && seconds === undefined) return undefined;
  if (anchor !== 'created_at') throw new InvalidRequestError('expires_after[anchor] must be "created_at".', 'expires_after.anchor');
  const n = typeof seconds === 'string' ? Number(seconds) : seconds;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 3600 || n > 2_592_000) {
    throw new InvalidRequestError('expires_after[seconds] must be an integer from 3600 to 2592000.', 'expires_after.seconds');
  }
  return n;
}

/** `limit`, `order`, `after`, `before`, through the gateway's one list-query check. */
export function pageQuery(query: Record<string, unknown>): PageQuery {
  return listQuery(query);
}
