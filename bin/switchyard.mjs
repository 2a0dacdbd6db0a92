#!/usr/bin/env node
// The `switchyard` command. In a source checkout it runs the gateway's entry
// point, built first if the sources changed; in the installed package, whose
// build ships with it, it runs the built entry point directly.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const freshness = join(root, 'scripts/build-freshness.mjs');
if (existsSync(freshness)) {
  const { runBuilt } = await import(pathToFileURL(freshness).href);
  await runBuilt(root, 'apps/gateway/src/main');
} else {
  await import(pathToFileURL(join(root, 'dist/apps/gateway/src/main.js')).href);
}
