import { MAX_JSON_DEPTH } from './json-depth.js';

/**
 * Keys one JSON object of a request body may have. Past the body parser,
 * code that handles an object key by key can be quadratic in the key count
 * (class-transformer de-duplicated keys with `indexOf`: 300,000 keys held
 * the event loop for minutes). Real bodies stay far below: metadata has 16
 * keys, a tool's JSON Schema a few hundred properties at most.
 */
export const MAX_OBJECT_KEYS = 10_000;

export type JsonShapeViolation =
  | { kind: 'depth'; limit: number }
  /** `count`: the keys seen when the check stopped, at least `limit + 1`. */
  | { kind: 'keys'; limit: number; count: number; path: string | null }
  /** A top-level array field longer than its limit (`tools`). */
  | { kind: 'items'; limit: number; path: string };

interface Frame {
  node: object;
  depth: number;
  parent: Frame | null;
  key: string | number | null;
}

function pathOf(frame: Frame): string | null {
  const keys: Array<string | number> = [];
  for (let f: Frame | null = frame; f && f.key !== null; f = f.parent) keys.push(f.key);
  if (keys.length === 0) return null;
  return keys
    .reverse()
    .map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`))
    .join('');
}

/**
 * The first way `value` is too deep or too wide for the gateway, or null.
 * One iterative pass, linear in the size of the value, never recursing.
 */
export function jsonShapeViolation(value: unknown, limits: { depth?: number; keys?: number } = {}): JsonShapeViolation | null {
  const depthLimit = limits.depth ?? MAX_JSON_DEPTH;
  const keyLimit = limits.keys ?? MAX_OBJECT_KEYS;
  if (value === null || typeof value !== 'object') return null;
  const stack: Frame[] = [{ node: value, depth: 1, parent: null, key: null }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > depthLimit) return { kind: 'depth', limit: depthLimit };
    if (Array.isArray(frame.node)) {
      frame.node.forEach((child, i) => {
        if (child !== null && typeof child === 'object') stack.push({ node: child, depth: frame.depth + 1, parent: frame, key: i });
      });
      continue;
    }
    const keys = Object.keys(frame.node);
    if (keys.length > keyLimit) return { kind: 'keys', limit: keyLimit, count: keyLimit + 1, path: pathOf(frame) };
    for (const key of keys) {
      const child = (frame.node as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') stack.push({ node: child, depth: frame.depth + 1, parent: frame, key });
    }
  }
  return null;
}
