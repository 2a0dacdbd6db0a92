#!/usr/bin/env node
// `node scripts/run-built.mjs apps/gateway/src/main [args...]`: see build-freshness.mjs.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBuilt } from './build-freshness.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [entry] = process.argv.splice(2, 1);
if (!entry) {
  process.stderr.write('usage: node scripts/run-built.mjs <entry without .js, e.g. apps/gateway/src/main> [args...]\n');
  process.exit(64);
}
await runBuilt(root, entry);
