import type { SearchResult } from '../providers/search-provider.interface.js';

/** Longest snippet before any budget pressure: a couple of sentences is what engines return anyway. */
const MAX_SNIPPET_CHARS = 600;
/** Below this a snippet says nothing; drop results instead of shrinking further. */
const MIN_SNIPPET_CHARS = 80;
const MAX_TITLE_CHARS = 200;

export interface QueryFailure {
  query: string;
  message: string;
}

export interface CompactedResults {
  /** What the model reads: JSON, at most the budget where at all possible. */
  text: string;
  /** The results that made it into `text`, in order. */
  shown: SearchResult[];
  omitted: number;
}

export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, Math.max(0, max - 1));
  // Prefer a word boundary when one is reasonably close to the cut.
  const space = cut.lastIndexOf(' ');
  if (space > max * 0.6) cut = cut.slice(0, space);
  return `${cut.trimEnd()}…`;
}

function render(queries: readonly string[], results: SearchResult[], omitted: number, failures: readonly QueryFailure[]): string {
  const body: Record<string, unknown> = queries.length === 1 ? { query: queries[0] } : { queries };
  body.results = results.map((r) => ({ title: r.title, url: r.url, ...(r.snippet ? { snippet: r.snippet } : {}), ...(r.date ? { date: r.date } : {}) }));
  if (omitted > 0) body.omitted_results = omitted;
  if (failures.length > 0) body.failed_queries = failures;
  return JSON.stringify(body);
}

/**
 * Fits results into `budgetChars`: snippets shrink first (evenly, so every
 * result keeps some context), then results drop from the tail, which is
 * where the least relevant ones are. JSON keeps the output unambiguous for
 * the model and cheap to test; a result is never cut mid-URL.
 */
export function compactResults(queries: readonly string[], results: readonly SearchResult[], budgetChars: number, failures: readonly QueryFailure[] = []): CompactedResults {
  const originals = results.map((r) => ({ ...r, title: truncateText(r.title, MAX_TITLE_CHARS) }));
  let cap = MAX_SNIPPET_CHARS;
  let kept = originals.map((r) => ({ ...r, snippet: truncateText(r.snippet, cap) }));
  let omitted = 0;
  for (;;) {
    const text = render(queries, kept, omitted, failures);
    const overflow = text.length - budgetChars;
    if (overflow <= 0) return { text, shown: kept, omitted };
    const longest = kept.reduce((m, r) => Math.max(m, r.snippet.length), 0);
    if (longest > MIN_SNIPPET_CHARS) {
      cap = Math.max(MIN_SNIPPET_CHARS, Math.min(cap, longest) - Math.ceil(overflow / kept.length));
      kept = kept.map((r, i) => ({ ...r, snippet: truncateText(originals[i].snippet, cap) }));
    } else if (kept.length > 1) {
      kept.pop();
      omitted++;
    } else if (kept.length === 1 && kept[0].snippet) {
      kept = [{ ...kept[0], snippet: '' }];
    } else {
      // One title and URL over budget: still better than telling the model nothing was found.
      return { text, shown: kept, omitted };
    }
  }
}
