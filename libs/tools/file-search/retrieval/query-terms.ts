/** Words too common to rank on; dropped from lexical queries and from rewritten queries. */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can could did do does for from had has have how i if in into is it its me my of on or our ' +
    'please should so tell than that the their them then there these they this to was we were what when where which who whom ' +
    'why will with would you your about any some all also just'
  ).split(' '),
);

/** Lower-case words of a query, operators and punctuation gone (FTS5 and tsquery syntax cannot leak in). */
export function queryTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const kept = words.filter((w) => !STOP_WORDS.has(w));
  return [...new Set(kept.length > 0 ? kept : words)];
}

/**
 * `rewrite_query`: the gateway has no model of its own to rewrite with, so
 * the rewrite is deterministic: the query's content words, in order.
 */
export function rewriteQuery(query: string): string {
  const rewritten = queryTerms(query).join(' ');
  return rewritten || query;
}
