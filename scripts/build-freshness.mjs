// Start from the built output when it is current: `npm start`, `npm run
// simulator`, `npm run demo` and the `switchyard` command compile only when a
// source changed since the last build (a full `tsc` takes ~40 s on 2 cores).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const SOURCE_DIRS = ['apps', 'libs', 'src', 'bench'];
const CONFIG_FILES = ['tsconfig.json', 'tsconfig.build.json'];
const STAMP = join('dist', '.build-stamp');

function newestSource(root, dir, newest = 0) {
  let entries;
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true });
  } catch {
    return newest;
  }
  for (const entry of entries) {
    const rel = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') newest = newestSource(root, rel, newest);
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
      newest = Math.max(newest, statSync(join(root, rel)).mtimeMs);
    }
  }
  return newest;
}

/** Why a build is needed, or null when `dist/` is current. */
export function staleReason(root) {
  // An image or tarball with only `dist/` has nothing to compile from.
  if (!existsSync(join(root, 'tsconfig.build.json'))) return null;
  const stamp = join(root, STAMP);
  if (!existsSync(stamp)) return 'no build yet';
  const built = statSync(stamp).mtimeMs;
  let newest = 0;
  for (const dir of SOURCE_DIRS) newest = newestSource(root, dir, newest);
  for (const file of CONFIG_FILES) if (existsSync(join(root, file))) newest = Math.max(newest, statSync(join(root, file)).mtimeMs);
  // The stamp is dated in whole milliseconds (a Date); a source written earlier in the
  // same millisecond as the build started must not look newer than it.
  return Math.floor(newest) > built ? 'sources changed since the last build' : null;
}

const LOCK = join('dist', '.build-lock');
/** A lock older than this was left by a build that died. */
const STALE_LOCK_MS = 10 * 60_000;

/**
 * Compiles when stale. Returns whether it compiled. Two starts at once (two
 * terminals, two test files) build once: the second waits for the first's
 * lock, then finds dist/ current.
 */
export function ensureBuilt(root, log = (line) => process.stderr.write(line + '\n')) {
  if (!staleReason(root)) return false;
  const lock = join(root, LOCK);
  mkdirSync(join(root, 'dist'), { recursive: true });
  for (let waited = false; ; waited = true) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      } catch {
        // removed meanwhile
      }
      if (!waited) log('switchyard: waiting for another build to finish...');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
    }
  }
  try {
    const reason = staleReason(root);
    if (!reason) return false;
    log(`switchyard: building (${reason})...`);
    build(root, log);
    return true;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** `tsc -p tsconfig.build.json`, then the stamp, dated when the sources were read. */
export function build(root, log = (line) => process.stderr.write(line + '\n')) {
  const startedAt = new Date();
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
  if (result.status !== 0) {
    log('switchyard: the build failed; fix the errors above.');
    // process.exit skips ensureBuilt's finally: let the next start try again at once.
    rmSync(join(root, LOCK), { recursive: true, force: true });
    process.exit(result.status ?? 1);
  }
  // Dated at the start: a source saved during the build makes the next start rebuild.
  writeFileSync(join(root, STAMP), `${startedAt.toISOString()}\n`);
  utimesSync(join(root, STAMP), startedAt, startedAt);
}

/** Builds if needed, then runs `dist/<entry>.js` in this process with the remaining arguments. */
export async function runBuilt(root, entry) {
  ensureBuilt(root);
  await import(pathToFileURL(join(root, 'dist', `${entry}.js`)).href);
}
