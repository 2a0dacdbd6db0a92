import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { ListOptions, Page } from '../state-store.interface.js';
import type { CatalogEntry, CatalogPage, CatalogQuery } from '#tool-sdk/ports/catalog.js';

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

/** Newest first, ties broken by id, as every catalog orders: `rows` fetched with `limit + 1`. */
export function catalogPage(rows: CatalogRow[], limit: number): CatalogPage {
  const data = rows.slice(0, limit).map((r) => ({ id: r.id, owner: r.owner, createdAt: Number(r.created_at) }));
  return { data, has_more: rows.length > limit, last_id: data.length > 0 ? data[data.length - 1].id : null };
}

/** Checks a catalog query the way list options are checked: a bad limit names `limit`. */
export function parseCatalogQuery(query: CatalogQuery): CatalogQuery {
  const { limit } = parseListOptions({ limit: query.limit });
  return { limit, ...(query.after ? { after: query.after } : {}), ...(query.id !== undefined ? { id: query.id } : {}) };
}

/** One catalog page of records already in memory (the memory stores). */
export function catalogOfEntries(entries: Iterable<CatalogEntry>, query: CatalogQuery): CatalogPage {
  const { limit, after, id } = parseCatalogQuery(query);
  if (id !== undefined)
    return catalogPage(
      [...entries].filter((e) => e.id === id).map((e) => ({ id: e.id, owner: e.owner, created_at: e.createdAt })),
      1,
    );
  const sorted = [...entries].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  let start = 0;
  if (after !== undefined) {
    start = sorted.findIndex((e) => e.id === after) + 1;
    if (start === 0) throw unknownCursor('after', after);
  }
  return catalogPage(
    sorted.slice(start, start + limit + 1).map((e) => ({ id: e.id, owner: e.owner, created_at: e.createdAt })),
    limit,
  );
}

/**
 * The SQL of one catalog page over a table with `id`, `owner` and a creation
 * column, newest first. `created` is the creation time in epoch seconds as
 * the page shows it (an expression); `sort` the stored column the pages are
 * ordered and cut by, which an index on (`sort`, id) serves, so a page costs
 * its own rows however large the table is (ordering by an expression such
 * as `created_at / 1000` would sort the whole table for every page).
 * `readSort` reads the cursor row's `sort` in a form that compares back
 * exactly (PostgreSQL's timestamptz as text: a JavaScript Date loses the
 * microseconds). With a cursor, `cursorSql` reads the cursor row's
 * `position` (takes the id) and `pageSql` takes (position, id, limit);
 * without, `pageSql` takes (limit). `byIdSql` reads the one record of
 * `query.id` (takes the id).
 */
export function catalogSql(
  table: string,
  created: string,
  mark: (n: number) => string,
  withCursor: boolean,
  sort: string = created,
  readSort: string = sort,
): { cursorSql: string; pageSql: string; byIdSql: string } {
  const select = `SELECT id, owner, ${created} AS created_at FROM ${table}`;
  // Qualified: a bare `created_at` in ORDER BY would name the select's alias (the seconds expression), not the indexed column.
  const key = /^\w+$/.test(sort) ? `${table}.${sort}` : sort;
  const order = `ORDER BY ${key} DESC, ${table}.id DESC`;
  return {
    cursorSql: `SELECT ${readSort} AS position FROM ${table} WHERE id = ${mark(1)}`,
    byIdSql: `${select} WHERE id = ${mark(1)}`,
    // A row-value comparison, which both drivers run as one range scan of the (sort, id) index.
    pageSql: withCursor ? `${select} WHERE (${key}, ${table}.id) < (${mark(1)}, ${mark(2)}) ${order} LIMIT ${mark(3)}` : `${select} ${order} LIMIT ${mark(1)}`,
  };
}

/** A catalog row as the SQL of `catalogSql` reads it. */
export type CatalogRow = { id: string; owner: string | null; created_at: number | string };
