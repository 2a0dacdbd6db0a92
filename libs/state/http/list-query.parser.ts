import { InvalidRequestError } from '#core/errors/gateway-error.js';
import { parseListOptions, type ListOptions } from '#storage/index.js';

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new InvalidRequestError(`'${name}' must be given once, as a string.`, name);
  return value;
}

/**
 * `after`, `before`, `limit` and `order` from a query string, checked up
 * front so that a bad value is a 400 naming the parameter whatever the id.
 */
export function parseListQuery(query: Record<string, unknown>, defaultOrder: 'asc' | 'desc' = 'desc'): ListOptions {
  const limitText = single(query, 'limit');
  if (limitText !== undefined && !/^\d+$/.test(limitText)) throw new InvalidRequestError('limit must be an integer between 1 and 100.', 'limit');
  const order = single(query, 'order') ?? defaultOrder;
  const options: ListOptions = {
    after: single(query, 'after'),
    before: single(query, 'before'),
    limit: limitText === undefined ? undefined : Number(limitText),
    order: order as ListOptions['order'],
  };
  // The store validates again; calling it here only moves the error ahead of the lookup.
  parseListOptions(options);
  return options;
}
