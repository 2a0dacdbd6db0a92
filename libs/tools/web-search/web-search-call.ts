import type { JsonObject } from '#core/protocol/items.js';

/** What the gateway keeps of one call for its public item; results themselves are not kept. */
export interface WebSearchCallData {
  queries: string[];
  /** URLs the model was shown. */
  sources: string[];
}

export const SOURCES_INCLUDE = 'web_search_call.action.sources';

/** The model's arguments: `{query, queries?}`; either field alone is accepted. */
export function parseSearchArguments(args: string, maxQueries: number): { queries: string[] } | { error: string } {
  let parsed: unknown;
  try {
    parsed = args.trim() === '' ? {} : JSON.parse(args);
  } catch {
    return { error: 'The arguments are not valid JSON; call web_search with {"query": "..."}.' };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { error: 'The arguments must be a JSON object such as {"query": "..."}.' };
  }
  const { query, queries } = parsed as { query?: unknown; queries?: unknown };
  const listed: unknown[] = [query, ...(Array.isArray(queries) ? queries : [])];
  const unique = [
    ...new Set(
      listed
        .filter((q): q is string => typeof q === 'string')
        .map((q) => q.trim())
        .filter(Boolean),
    ),
  ];
  if (unique.length === 0) return { error: 'No query given; call web_search with {"query": "..."}.' };
  return { queries: unique.slice(0, maxQueries) };
}

/** Queries for display when the call's own record is unavailable (it failed before running). */
export function queriesOf(args: string): string[] {
  const parsed = parseSearchArguments(args, Number.MAX_SAFE_INTEGER);
  return 'queries' in parsed ? parsed.queries : [];
}

/** `action` of a `web_search_call`: `queries` only when there were several, `sources` only on request. */
export function searchAction(queries: readonly string[], sources: readonly string[] | undefined): JsonObject {
  const action: JsonObject = { type: 'search', query: queries[0] ?? '' };
  if (queries.length > 1) action.queries = [...queries];
  if (sources) action.sources = sources.map((url) => ({ type: 'url', url }));
  return action;
}
