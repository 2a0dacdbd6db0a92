import type { JsonObject } from '#tool-sdk/index.js';
import type { SearchResult } from '../retrieval/file-search.service.js';

export const RESULTS_INCLUDE = 'file_search_call.results';

/** A `file_search_call.results[]` entry, OpenAI's shape. */
export interface PublicResult {
  file_id: string;
  filename: string;
  score: number;
  text: string;
  attributes: JsonObject;
}

/** What the executor keeps of one call for its public item. */
export interface FileSearchCallData {
  queries: string[];
  results: PublicResult[];
}

/** The model's arguments: `{queries: [...]}`, or a lone `{query}` as weaker models write it. */
export function parseQueries(args: string, max: number): { queries: string[] } | { error: string } {
  let parsed: unknown;
  try {
    parsed = args.trim() === '' ? {} : JSON.parse(args);
  } catch {
    return { error: 'The arguments are not valid JSON; call file_search with {"queries": ["..."]}.' };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { error: 'The arguments must be a JSON object such as {"queries": ["..."]}.' };
  const { query, queries } = parsed as { query?: unknown; queries?: unknown };
  const listed: unknown[] = [...(Array.isArray(queries) ? queries : typeof queries === 'string' ? [queries] : []), query];
  const unique = [
    ...new Set(
      listed
        .filter((q): q is string => typeof q === 'string')
        .map((q) => q.trim())
        .filter(Boolean),
    ),
  ];
  if (unique.length === 0) return { error: 'No query given; call file_search with {"queries": ["..."]}.' };
  if (unique.length > max) return { error: `At most ${max} queries per call (got ${unique.length}); split them over several calls.` };
  return { queries: unique };
}

export function queriesOf(args: string): string[] {
  const parsed = parseQueries(args, Number.MAX_SAFE_INTEGER);
  return 'queries' in parsed ? parsed.queries : [];
}

export function publicResults(results: readonly SearchResult[]): PublicResult[] {
  return results.map((r) => ({ file_id: r.fileId, filename: r.filename, score: Number(r.score.toFixed(6)), text: r.text, attributes: r.attributes }));
}

/**
 * What the model reads: each result labelled with its file id and name so
 * that it can say where an answer came from, within a character budget
 * (results are dropped from the end, never cut mid-way, except a first
 * result larger than the whole budget).
 */
export function resultsForModel(queries: readonly string[], results: readonly PublicResult[], budget: number): string {
  if (results.length === 0) return `No results in the attached files for ${queries.map((q) => JSON.stringify(q)).join(', ')}.`;
  const parts: string[] = [];
  let used = 0;
  for (const [i, r] of results.entries()) {
    const block = `[${i + 1}] file_id=${r.file_id} filename=${JSON.stringify(r.filename)} score=${r.score.toFixed(3)}\n${r.text}`;
    if (used + block.length > budget) {
      if (i === 0) parts.push(block.slice(0, budget));
      break;
    }
    parts.push(block);
    used += block.length + 2;
  }
  return parts.join('\n\n');
}

/** Bound on annotations per message: a text repeating a name thousands of times needs no more. */
const MAX_CITATIONS = 100;

/**
 * Mentions of the given files in `text` (file id, or a filename of at least
 * three characters), left to right, never overlapping; `index` is where
 * the mention starts.
 */
export function findCitations(text: string, files: ReadonlyMap<string, string>): Array<Record<string, unknown>> {
  const needles: Array<{ needle: string; fileId: string; filename: string }> = [];
  for (const [fileId, filename] of files) {
    needles.push({ needle: fileId, fileId, filename });
    if (filename.length >= 3) needles.push({ needle: filename, fileId, filename });
  }
  // Longer first, so that "report-2024.pdf" wins over "report" at the same position.
  needles.sort((a, b) => b.needle.length - a.needle.length);
  const found: Array<{ index: number; end: number; fileId: string; filename: string }> = [];
  for (const n of needles) {
    for (let at = text.indexOf(n.needle); at !== -1 && found.length < MAX_CITATIONS * 4; at = text.indexOf(n.needle, at + n.needle.length)) {
      const end = at + n.needle.length;
      if (!found.some((f) => at < f.end && end > f.index)) found.push({ index: at, end, fileId: n.fileId, filename: n.filename });
    }
  }
  return found
    .sort((a, b) => a.index - b.index)
    .slice(0, MAX_CITATIONS)
    .map((f) => ({ type: 'file_citation', file_id: f.fileId, filename: f.filename, index: f.index }));
}
