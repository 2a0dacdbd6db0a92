#!/usr/bin/env node
// Fails when an entry of `knownDebts` in eslint.config.mjs is no longer needed:
// its files are linted without the debts, and an entry none of whose extra
// edges is still taken by those files is reported, so the list only shrinks.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
process.env.SWITCHYARD_LINT_WITHOUT_DEBTS = '1';
const { knownDebts } = await import('../eslint.config.mjs');
const eslint = new ESLint({ cwd: root, cache: false });

const stale = [];
for (const debt of knownDebts) {
  const results = await eslint.lintFiles(debt.files);
  const edges = Object.entries(debt.also).flatMap(([from, tos]) => tos.map((to) => ({ from, to })));
  const forbidden = results.flatMap((r) => r.messages).filter((m) => m.ruleId === 'switchyard/dependency-direction');
  const stillNeeded = edges.some(({ to }) => forbidden.some((m) => m.message.includes(`must not depend on ${to} `)));
  if (!stillNeeded) stale.push(debt);
}
for (const debt of stale) {
  process.stderr.write(`eslint.config.mjs: the known debt for ${debt.files.join(', ')} (${debt.why}) is paid: delete its entry.\n`);
}
process.exit(stale.length ? 1 : 0);
