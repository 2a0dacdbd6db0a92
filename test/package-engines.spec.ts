import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

/**
 * The project says Node ≥ 20.19; every package it installs must say so too,
 * or an install on Node 20 warns (or, with engine-strict, fails) on a
 * dependency. Read from the lockfile, which is what `npm ci` installs.
 */
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean; optional?: boolean }>;
};

describe('engines', () => {
  const oldestNode = semver.minVersion(pkg.engines.node)!.version;

  it('the project names a Node 20 line it supports', () => {
    expect(oldestNode).toBe('20.19.0');
  });

  it('every locked package accepts the oldest Node the project supports', () => {
    const refusing = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .map(([path, entry]) => ({ path, range: Array.isArray(entry.engines) ? undefined : entry.engines?.node }))
      .filter(({ range }) => range !== undefined && semver.validRange(range) !== null && !semver.satisfies(oldestNode, range!))
      .map(({ path, range }) => `${path} (${range})`);
    expect(refusing).toEqual([]);
  });
});
