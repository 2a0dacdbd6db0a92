import { InvalidRequestError } from '#tool-sdk/index.js';
import type { Attributes } from '../storage/file-search-rows.js';

type Scalar = string | number | boolean;

export type AttributeFilter =
  | { type: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte'; key: string; value: Scalar }
  | { type: 'in' | 'nin'; key: string; value: Scalar[] }
  | { type: 'and' | 'or'; filters: AttributeFilter[] };

const COMPARISONS = new Set(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin']);
/** Nesting is bounded so that a hostile filter cannot recurse the stack away. */
const MAX_DEPTH = 16;

const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** Validates OpenAI's comparison and compound filters; errors name the offending field. */
export function parseAttributeFilter(raw: unknown, path: string, depth = 0): AttributeFilter {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new InvalidRequestError(`${path} must be a comparison or compound filter object.`, path);
  if (depth > MAX_DEPTH) throw new InvalidRequestError(`${path} nests filters deeper than ${MAX_DEPTH} levels.`, path);
  const f = raw as Record<string, unknown>;
  if (f.type === 'and' || f.type === 'or') {
    if (!Array.isArray(f.filters) || f.filters.length === 0) throw new InvalidRequestError(`${path}.filters must be a non-empty array.`, `${path}.filters`);
    return { type: f.type, filters: f.filters.map((sub, i) => parseAttributeFilter(sub, `${path}.filters[${i}]`, depth + 1)) };
  }
  if (typeof f.type !== 'string' || !COMPARISONS.has(f.type)) {
    throw new InvalidRequestError(`${path}.type must be one of eq, ne, gt, gte, lt, lte, in, nin, and, or.`, `${path}.type`);
  }
  if (typeof f.key !== 'string' || f.key === '') throw new InvalidRequestError(`${path}.key must be a non-empty string.`, `${path}.key`);
  if (f.type === 'in' || f.type === 'nin') {
    if (!Array.isArray(f.value) || !f.value.every(isScalar)) throw new InvalidRequestError(`${path}.value must be an array of strings, numbers or booleans.`, `${path}.value`);
    return { type: f.type, key: f.key, value: f.value };
  }
  if (!isScalar(f.value)) throw new InvalidRequestError(`${path}.value must be a string, number or boolean.`, `${path}.value`);
  if (['gt', 'gte', 'lt', 'lte'].includes(f.type) && typeof f.value === 'boolean') {
    throw new InvalidRequestError(`${path}.value must be a number or string for ${f.type}.`, `${path}.value`);
  }
  return { type: f.type as 'eq', key: f.key, value: f.value };
}

function order(a: Scalar, b: Scalar): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

/** Does a file's attributes satisfy the filter? A missing key satisfies only `ne` and `nin`. */
export function matchesFilter(filter: AttributeFilter, attributes: Attributes): boolean {
  switch (filter.type) {
    case 'and':
      return filter.filters.every((f) => matchesFilter(f, attributes));
    case 'or':
      return filter.filters.some((f) => matchesFilter(f, attributes));
    case 'in':
      return filter.key in attributes && filter.value.some((v) => v === attributes[filter.key]);
    case 'nin':
      return !(filter.key in attributes) || !filter.value.some((v) => v === attributes[filter.key]);
    default: {
      const actual = attributes[filter.key];
      if (filter.type === 'ne') return actual !== filter.value;
      if (actual === undefined) return false;
      if (filter.type === 'eq') return actual === filter.value;
      const c = order(actual, filter.value);
      if (c === undefined) return false;
      return filter.type === 'gt' ? c > 0 : filter.type === 'gte' ? c >= 0 : filter.type === 'lt' ? c < 0 : c <= 0;
    }
  }
}
