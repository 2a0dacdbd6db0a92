// `npm run build`: compile to dist/ and stamp it, so the start scripts know it is current.
// `--if-stale` (the package's `prepack`): compile only when a source changed, under the
// same lock the start scripts take. `npm pack` beside a running `npm start` (two test
// files at once) must not rewrite dist/ while a worker is importing from it: tsc writes
// each file in place, and a worker that read one half-written failed to boot.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, ensureBuilt } from './build-freshness.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (process.argv.includes('--if-stale')) ensureBuilt(root);
else build(root);
