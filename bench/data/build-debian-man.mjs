#!/usr/bin/env node
// Builds debian-man.json.gz (see README.md): renders the listed man pages of
// this machine as plain text (`man -l`, 80 columns, no overstrike), and adds
// the questions written for them (debian-man-questions.tsv). Run from the
// repository root: `node bench/data/build-debian-man.mjs`. Needs the Debian
// packages that ship the pages (listed in debian-man-pages.txt) installed.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const dir = 'bench/data';
const pages = readFileSync(`${dir}/debian-man-pages.txt`, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '' && !l.startsWith('#'))
  .map((l) => l.trim().split(/\s+/));
const documents = pages.map(([pkg, path]) => {
  const text = execFileSync('sh', ['-c', 'man -l "$1" 2>/dev/null | col -bx', 'render', path], {
    env: { ...process.env, MANWIDTH: '80', LC_ALL: 'C.UTF-8' },
    maxBuffer: 64 << 20,
  }).toString('utf8');
  const id = path.split('/').pop().replace(/\.gz$/, '');
  return { id, package: pkg, title: `${id.replace(/\.(\d)$/, '($1)')}`, text };
});
const ids = new Set(documents.map((d) => d.id));
const queries = readFileSync(`${dir}/debian-man-questions.tsv`, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l, i) => {
    const [doc, text] = l.split('\t');
    if (!ids.has(doc)) throw new Error(`question ${i + 1} names ${doc}, which is not in the page list`);
    // Odd-numbered questions were used while tuning; even-numbered ones were held out.
    return { id: `m${i + 1}`, text, relevant: [doc], split: i % 2 === 0 ? 'tuning' : 'held-out' };
  });
const corpus = {
  description: 'Debian man pages (sections 1 and 8) of common packages, rendered as text; one question per judged page, written by reading it',
  documents,
  queries,
};
writeFileSync(`${dir}/debian-man.json.gz`, gzipSync(JSON.stringify(corpus), { level: 9 }));
console.error(`${documents.length} pages, ${queries.length} questions`);
