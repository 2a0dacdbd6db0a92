import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { ListOptions, Page } from '../state-store.interface.js';

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 100;

export interface ListQuery {
  order: 'asc' | 'desc';
  limit: number;
  after?: string;
  before?: string;
}

/** Validates list options once, the same way for every backend. */
export function parseListOptions(opts: ListOptions | undefined): ListQuery {
  const order = opts?.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') {
    throw new InvalidRequestError("order must be 'asc' or 'desc'.", 'order');
  }
  const limit = opts?.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new InvalidRequestError(`limit must be an integer between 1 and ${MAX_LIST_LIMIT}.`, 'limit');
  }
  const query: ListQuery = { order, limit };
  if (opts?.after !== undefined && opts.after !== '') query.after = opts.after;
  if (opts?.before !== undefined && opts.before !== '') query.before = opts.before;
  return query;
}

export function unknownCursor(param: 'after' | 'before', id: string): InvalidRequestError {
  return new InvalidRequestError(`No item with id '${id}' in this list.`, param, 'invalid_cursor');
}

/**
 * Exclusive position bounds for a cursor window. `after` means "further along
 * in the chosen order", so in `desc` order it bounds positions from above.
 */
export function positionRange(order: 'asc' | 'desc', afterPosition: number | undefined, beforePosition: number | undefined): { lo: number; hi: number } {
  const [loCursor, hiCursor] = order === 'asc' ? [afterPosition, beforePosition] : [beforePosition, afterPosition];
  return { lo: loCursor ?? -1, hi: hiCursor ?? Number.MAX_SAFE_INTEGER };
}

/** `rows` is the window in order, fetched with `limit + 1` so that one extra row reveals `has_more`. */
export function toPage<T>(rows: T[], limit: number, idOf: (row: T) => string): Page<T> {
  const data = rows.slice(0, limit);
  return {
    data,
    first_id: data.length > 0 ? idOf(data[0]) : null,
    last_id: data.length > 0 ? idOf(data[data.length - 1]) : null,
    has_more: rows.length > limit,
  };
}
