// `npm run build`: compile to dist/ and stamp it, so the start scripts know it is current.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from './build-freshness.mjs';

build(join(dirname(fileURLToPath(import.meta.url)), '..'));
