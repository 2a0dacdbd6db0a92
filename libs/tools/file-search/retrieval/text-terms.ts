import { threadScriptUrl } from '../ingestion/extraction-pool.js';
import type { ChunkTerms } from '../storage/file-search-rows.js';

/** The shared analyzer (`ingestion/thread/text-terms.mjs`), as the main thread sees it. */
export interface TextTerms {
  termCounts(text: string): ChunkTerms;
  /** `termCounts` as the ingestion thread's index line: the length, then each term and its count, space-separated. */
  termCountsLine(text: string): string;
  queryTerms(query: string): string[];
}

/**
 * The analyzer is plain JavaScript beside the ingestion thread, so that a
 * query is cut exactly as the chunks were; it is found the way the thread's
 * script is (a build has no copy beside this file). Loaded once: a module,
 * not state.
 */
let loading: Promise<TextTerms> | undefined;
export function textTerms(): Promise<TextTerms> {
  return (loading ??= import(threadScriptUrl('text-terms.mjs').href) as Promise<TextTerms>);
}
