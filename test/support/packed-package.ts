import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The package as a consumer gets it, `npm pack` of this repository, made once
 * and shared by every test file that installs it (the package test and the
 * plugin-project test, often in two Jest workers at the same time).
 *
 * The tarball is kept under node_modules/.cache by a key of everything that
 * goes into it: the build stamp (dist/ changes only by a build, which rewrites
 * the stamp), package.json, and the contents of the files the manifest ships
 * from outside dist/. A source change rebuilds (the package's own `prepack`,
 * under its lock) and so packs anew; an unchanged tree reuses the tarball.
 */
const run = promisify(execFile);

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const repoPackage = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as Record<string, any>;

const CACHE = join(REPO, 'node_modules/.cache/switchyard-pack');
const LOCK = join(CACHE, '.lock');
/** A lock older than this was left behind whoever holds it (a pack takes seconds). */
const STALE_LOCK_MS = 10 * 60_000;
const PRUNE_AFTER_MS = 2 * 60 * 60_000;

/** Only what a child needs to run; nothing of the test's own settings leaks in. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, npm_config_cache: process.env.npm_config_cache, ...extra };
}

/**
 * The files a manifest `files` entry names outside dist/: a path, or a
 * directory and a `*` pattern for the file names in it (the forms package.json uses).
 */
function filesOf(entry: string): string[] {
  const star = entry.lastIndexOf('/*');
  if (star === -1) return existsSync(join(REPO, entry)) ? [entry] : [];
  const dir = entry.slice(0, star);
  const pattern = new RegExp(
    `^${entry
      .slice(star + 1)
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')}$`,
  );
  if (!existsSync(join(REPO, dir))) return [];
  return readdirSync(join(REPO, dir))
    .filter((name) => pattern.test(name) && statSync(join(REPO, dir, name)).isFile())
    .sort()
    .map((name) => `${dir}/${name}`);
}

/** The cache key: the build stamp, the manifest, and the shipped files from outside dist/. */
function packKey(): string {
  const hash = createHash('sha256');
  hash.update(readFileSync(join(REPO, 'dist/.build-stamp')));
  hash.update(readFileSync(join(REPO, 'package.json')));
  const shipped = (repoPackage.files as string[]).filter((entry) => !entry.startsWith('!') && !entry.startsWith('dist/'));
  for (const file of shipped.flatMap(filesOf)) hash.update(`\0${file}\0`).update(readFileSync(join(REPO, file)));
  return hash.digest('hex').slice(0, 24);
}

/** Whether the lock was left behind: its holder died (killed mid-run), or it is older than any pack. */
function abandoned(): boolean {
  try {
    if (Date.now() - statSync(LOCK).mtimeMs > STALE_LOCK_MS) return true;
    const holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    process.kill(holder, 0);
    return false;
  } catch (err) {
    // No such process: abandoned. No pid file yet (the holder is between its two steps) or no lock: not ours to judge.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Runs `work` holding the cache's lock (a directory: its creation is atomic across processes). */
async function locked<T>(work: () => Promise<T>): Promise<T> {
  mkdirSync(CACHE, { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (abandoned()) rmSync(LOCK, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * The path of this tree's `npm pack` tarball, packed when no test file has
 * packed this exact tree yet. dist/ is current when it resolves (built first
 * when a source changed), so the repository's own dist/ matches the tarball.
 */
export async function packedTarball(): Promise<string> {
  // The package's `prepack`, run first so that the stamp the key reads is the one the tarball is packed from.
  await run(process.execPath, [join(REPO, 'scripts/build.mjs'), '--if-stale'], { cwd: REPO, maxBuffer: 16 * 1024 * 1024 });
  return locked(async () => {
    const dir = join(CACHE, packKey());
    const done = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith('.tgz')) : undefined;
    if (done) return join(dir, done);
    // Packed aside and renamed, so a reader never sees a half-written tarball.
    const partial = await mkdtemp(join(CACHE, 'packing-'));
    const { stdout } = await run('npm', ['pack', '--pack-destination', partial, '--silent'], { cwd: REPO, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    // Filed under the tree it was packed from: a source saved meanwhile made `prepack` build again.
    const packed = join(CACHE, packKey());
    const name = stdout.trim().split('\n').at(-1)!;
    if (existsSync(join(packed, name))) rmSync(partial, { recursive: true, force: true });
    else renameSync(partial, packed);
    // Earlier trees' tarballs go once no run can still be installing one (a run is minutes; they are 1 MB each).
    for (const old of readdirSync(CACHE)) {
      const path = join(CACHE, old);
      if (path !== packed && path !== LOCK && Date.now() - statSync(path).mtimeMs > PRUNE_AFTER_MS) rmSync(path, { recursive: true, force: true });
    }
    return join(packed, name);
  });
}

/**
 * The tsconfig.json of a project outside the repository that compiles
 * against the installed package's shipped declarations (Node's ES module
 * resolution, decorators with metadata as Nest needs), from src/ to dist/.
 */
export function writeConsumerTsconfig(project: string): string {
  const file = join(project, 'tsconfig.json');
  writeFileSync(
    file,
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        skipLibCheck: true,
        types: ['node'],
        rootDir: 'src',
        outDir: 'dist',
      },
      include: ['src'],
    }),
  );
  return file;
}

/** Installs a project's dependencies as a consumer does, from npm's cache (nothing here needs the network). */
export async function npmInstall(project: string, args: string[] = []): Promise<void> {
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', ...args], {
    cwd: project,
    env: childEnv(),
    maxBuffer: 16 * 1024 * 1024,
  });
}

/** `tsc -p` of a project with the repository's TypeScript. */
export async function compileProject(project: string): Promise<void> {
  await run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(project, 'tsconfig.json')], { cwd: project, maxBuffer: 16 * 1024 * 1024 });
}
