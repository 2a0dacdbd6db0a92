import { randomBytes } from 'node:crypto';
import type { JsonObject } from '#tool-sdk/items.js';

/**
 * Small readers for untyped upstream JSON. Upstream servers disagree on
 * optional fields (absent, `null`, wrong type), so every read is defensive.
 */

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function stringOr<T>(value: unknown, fallback: T): string | T {
  return typeof value === 'string' ? value : fallback;
}

export function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** Drops `null` and `undefined` members: several upstreams reject an explicit `null` for an optional field. */
export function omitNullish<T extends JsonObject>(value: T): T {
  const out: JsonObject = {};
  // `for...in` with an own-key check reads what `Object.entries` would without making a pair array per member.
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const member = value[key];
    if (member !== null && member !== undefined) out[key] = member;
  }
  return out as T;
}

/**
 * Function-call arguments as the JSON text the Responses API carries. Some
 * llama.cpp and Ollama versions send an already-parsed object instead.
 */
export function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  return JSON.stringify(value);
}

/** A call id for servers that send none (Ollama); the loop needs one to pair the output. */
export function newCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}
