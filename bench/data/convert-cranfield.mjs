// Converts the Cranfield collection in TREC format (the files cran.all.1400.xml,
// cran.qry.xml and cranqrel.trec.txt of github.com/oussbenk/cranfield-trec-dataset)
// to the one JSON file the retrieval bench reads: `node convert-cranfield.mjs DIR > cranfield.json`.
// Only the format changes: texts, queries and judgments are the collection's own.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
const read = (name) => readFileSync(join(dir, name), 'utf8');
const field = (block, tag) => (block.match(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`))?.[1] ?? '').replace(/\s+/g, ' ').trim();

const documents = [...read('cran.all.1400.xml').matchAll(/<doc>([\s\S]*?)<\/doc>/g)].map(([, d]) => ({
  id: field(d, 'docno'),
  title: field(d, 'title'),
  text: field(d, 'text'),
}));
// The judgments number topics by their position in the query file (1..225), not by the
// query's own number (which skips): the usual reading of this collection's qrels.
const queries = [...read('cran.qry.xml').matchAll(/<top>([\s\S]*?)<\/top>/g)].map(([, q], i) => ({ id: String(i + 1), text: field(q, 'title') }));
const relevant = {};
for (const line of read('cranqrel.trec.txt').split('\n')) {
  const [topic, , doc, rel] = line.trim().split(/\s+/);
  if (rel === '1') (relevant[topic] ??= []).push(doc);
}
process.stdout.write(
  JSON.stringify({
    description:
      'The Cranfield collection (1,400 aeronautics abstracts, 225 queries, relevance judgments), a classic public IR test collection; judgments 1-4 of the original five-point scale count as relevant.',
    documents,
    queries: queries.filter((q) => relevant[q.id]).map((q) => ({ ...q, relevant: relevant[q.id] })),
  }) + '\n',
);
