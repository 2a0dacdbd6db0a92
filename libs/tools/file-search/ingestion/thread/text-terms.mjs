// The lexical analyzer of file search, one for documents and queries alike:
// lower-cased letter/digit words, English stop words dropped, Porter stems.
// Plain JavaScript so that the ingestion thread (a bare worker, no TypeScript
// loader) and the main thread (for queries, through `retrieval/text-terms.ts`)
// run the same code: a chunk's terms and a query's terms can only meet if
// they were cut alike.
import { stemmer } from 'stemmer';

/** Function words of English that say nothing about a text's subject (the usual IR list, plus question words). */
export const STOP_WORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by can ' +
    'could did do does doing down during each few for from further had has have having he her here hers herself him himself his how ' +
    'i if in into is it its itself just me more most my myself no nor not of off on once only or other our ours ourselves out over ' +
    'own same she should so some such than that the their theirs them themselves then there these they this those through to too ' +
    'under until up very was we were what when where which while who whom why will with would you your yours yourself yourselves ' +
    'please tell may might must shall us'
  ).split(' '),
);

/** Longer "words" are hashes, base64 or noise: indexing them only grows the index. */
export const MAX_TERM_CHARS = 40;

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Stems of words seen recently. A text repeats its words, and with chunks
 * overlapping by half every word is analyzed twice: the stemmer's suffix
 * rules (a dozen regular expressions a word) ran for each occurrence.
 * Bounded: emptied when full, so a file of random words cannot grow it.
 */
const stems = new Map();
const MAX_REMEMBERED_STEMS = 50_000;

function stemOf(word) {
  let stem = stems.get(word);
  if (stem === undefined) {
    if (stems.size >= MAX_REMEMBERED_STEMS) stems.clear();
    stems.set(word, (stem = stemmer(word)));
  }
  return stem;
}

/** Calls `each` with the terms of a text, in order, repeats kept. */
function eachTerm(text, each) {
  WORD.lastIndex = 0;
  const lower = text.toLowerCase();
  for (let m = WORD.exec(lower); m !== null; m = WORD.exec(lower)) {
    const word = m[0];
    if (word.length > MAX_TERM_CHARS || STOP_WORDS.has(word)) continue;
    each(stemOf(word));
  }
}

/** The terms of a text, in order, repeats kept. */
export function analyze(text) {
  const out = [];
  eachTerm(text, (term) => out.push(term));
  return out;
}

/**
 * What the index keeps of a chunk: its distinct terms with their counts
 * (in order of first occurrence), and its length in terms (BM25's length
 * normalisation).
 */
export function termCounts(text) {
  let length = 0;
  const counts = new Map();
  eachTerm(text, (term) => {
    length++;
    counts.set(term, (counts.get(term) ?? 0) + 1);
  });
  return { length, counts: [...counts] };
}

/**
 * `termCounts` as the one line the ingestion thread sends for a chunk: its
 * length, then each distinct term and its count, space-separated (terms
 * are letters and digits only). Written straight from the counts, without
 * a pair array per term.
 */
export function termCountsLine(text) {
  let length = 0;
  const counts = new Map();
  eachTerm(text, (term) => {
    length++;
    counts.set(term, (counts.get(term) ?? 0) + 1);
  });
  let line = `${length}`;
  for (const [term, n] of counts) line += ` ${term} ${n}`;
  return line;
}

/**
 * A query's distinct terms. A query made only of stop words keeps them
 * (stemmed), so it still asks for something; the index holds no stop
 * words, so such a query finds nothing, which is the truth.
 */
export function queryTerms(query) {
  const kept = analyze(query);
  const all = kept.length > 0 ? kept : (query.toLowerCase().match(WORD) ?? []).filter((w) => w.length <= MAX_TERM_CHARS).map((w) => stemmer(w));
  return [...new Set(all)];
}
