import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** matplotlib's font list on the host, to be seen read-only inside each sandbox. */
export interface FontCacheFile {
  /** The file on the host. */
  host: string;
  /** Its name as matplotlib looks for it in `MPLCONFIGDIR` (`fontlist-v330.json`: the version is matplotlib's). */
  name: string;
}

/** Building the list reads every installed font: seconds on a loaded machine, so it gets a generous bound. */
const BUILD_MS = 120_000;
const FONT_LIST = /^fontlist-v\d+\.json$/;

const built = new Map<string, Promise<FontCacheFile | null>>();

/**
 * The font list matplotlib builds the first time it is imported, built once
 * per gateway process for `python` (the sandbox's interpreter) and kept in a
 * directory of its own until the process exits. Each sandbox's
 * `MPLCONFIGDIR` is its own empty `/tmp`, so without this every call that
 * imports `matplotlib.pyplot` scanned every font again (about a second idle,
 * over five seconds on a busy machine, when matplotlib also prints a notice
 * into the program's output). The sandbox sees the same fonts at the same
 * paths (`/usr` and `/etc/fonts` are bound), so the host's list is theirs.
 *
 * `null` when it cannot be built (no matplotlib, a read-only temp directory):
 * sandboxes then build their own, as before.
 */
export function matplotlibFontCache(python: string): Promise<FontCacheFile | null> {
  let file = built.get(python);
  if (!file) {
    file = build(python);
    built.set(python, file);
  }
  return file;
}

async function build(python: string): Promise<FontCacheFile | null> {
  let dir: string;
  try {
    dir = mkdtempSync(join(tmpdir(), 'sy-mpl-'));
  } catch {
    return null;
  }
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const ok = await new Promise<boolean>((done) => {
    // `-I` and a bare environment: the list depends on the fonts alone, not on the gateway's variables.
    execFile(python, ['-I', '-c', 'import matplotlib.font_manager'], { env: { PATH: '/usr/bin:/bin', HOME: dir, MPLCONFIGDIR: dir }, timeout: BUILD_MS }, (err) => done(!err));
  });
  const name = ok ? readdirSync(dir).find((f) => FONT_LIST.test(f)) : undefined;
  if (!name) return null;
  // The sandbox runs as another user: it may read the list, never change it.
  chmodSync(dir, 0o755);
  chmodSync(join(dir, name), 0o444);
  return { host: join(dir, name), name };
}
