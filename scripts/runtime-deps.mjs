#!/usr/bin/env node
// The packages the deployable gateway needs at run time, from package-lock.json:
// the dependencies, the peer dependencies (Nest, the storage drivers and broker
// clients, installed here as devDependencies), and everything they need in turn.
// `node scripts/runtime-deps.mjs --prune` deletes every other package from
// node_modules (the image's runtime stage ships no compiler, test runner or linter).
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where Node finds `name` from the package at `from` (a lockfile key: '' or 'node_modules/a/node_modules/b'). */
function resolveIn(packages, from, name) {
  for (let base = from; ;) {
    const candidate = base ? `${base}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return null;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/** The lockfile keys of every package reachable from the root's dependencies and peer dependencies. */
export function runtimePackages(lock) {
  const packages = lock.packages;
  const root = packages[''];
  const keep = new Set();
  const queue = [...Object.keys(root.dependencies ?? {}), ...Object.keys(root.peerDependencies ?? {})].map((name) => ['', name]);
  while (queue.length > 0) {
    const [from, name] = queue.pop();
    const key = resolveIn(packages, from, name);
    // An optional dependency for another platform is not installed.
    if (!key || keep.has(key)) continue;
    keep.add(key);
    const pkg = packages[key];
    for (const dep of [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]) queue.push([key, dep]);
  }
  return keep;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // `--root DIR`: another tree laid out like this one (an image's /app); this checkout by default.
  const at = process.argv.indexOf('--root');
  const root = at !== -1 ? process.argv[at + 1] : join(dirname(fileURLToPath(import.meta.url)), '..');
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const keep = runtimePackages(lock);
  const all = Object.keys(lock.packages).filter((key) => key.startsWith('node_modules/') && !lock.packages[key].link);
  const drop = all.filter((key) => !keep.has(key));
  if (process.argv.includes('--prune')) {
    for (const key of drop) rmSync(join(root, key), { recursive: true, force: true });
    rmSync(join(root, 'node_modules', '.bin'), { recursive: true, force: true });
    process.stdout.write(`kept ${keep.size} packages, removed ${drop.length}\n`);
  } else {
    process.stdout.write([...keep].sort().join('\n') + '\n');
  }
}
