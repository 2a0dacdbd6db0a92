import type { JsonObject } from '#tool-sdk/index.js';

/** What the gateway keeps of one call for its public item; results themselves are not kept. */
export interface WebSearchCallData {
  queries: string[];
  /** URLs the model was shown. */
  sources: string[];
  /** Their titles, by URL, for the answer's `url_citation` annotations. */
  titles?: Record<string, string>;
}

/**
 * `url_citation` annotations on an answer: each place it gives the URL of a
 * page the search showed the model cites that page (with its title), as
 * OpenAI's web search answers carry them and clients build their "sources"
 * from them (the AI SDK's `sources`, LangChain's citations). Linear in the
 * text per source; a URL that is the prefix of a longer one is cited once,
 * at the longer one.
 */
export function urlCitations(text: string, pages: ReadonlyMap<string, string>): Array<Record<string, unknown>> {
  const found: Array<{ url: string; title: string; start: number; end: number }> = [];
  for (const [url, title] of pages) {
    if (!url) continue;
    for (let at = text.indexOf(url); at >= 0; at = text.indexOf(url, at + url.length)) found.push({ url, title, start: at, end: at + url.length });
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Array<Record<string, unknown>> = [];
  let covered = -1;
  for (const hit of found) {
    if (hit.start < covered) continue;
    covered = hit.end;
    out.push({ type: 'url_citation', url: hit.url, title: hit.title, start_index: hit.start, end_index: hit.end });
  }
  return out;
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
