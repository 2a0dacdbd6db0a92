#!/usr/bin/env node
// The `switchyard` command: the gateway's entry point, built first if the sources changed.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBuilt } from '../scripts/build-freshness.mjs';

await runBuilt(join(dirname(fileURLToPath(import.meta.url)), '..'), 'apps/gateway/src/main');
