import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** `size:mtimeMs` of each regular file under `dir`, keyed by relative path. */
export async function workspaceStamps(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  async function walk(sub: string): Promise<void> {
    let entries;
    try {
      entries = await readdir(join(dir, sub), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const rel = sub ? `${sub}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(rel);
      else if (e.isFile()) {
        const st = await stat(join(dir, rel));
        out.set(rel, `${st.size}:${Math.trunc(st.mtimeMs)}`);
      }
    }
  }
  await walk('');
  return out;
}

/**
 * The host path for a workspace-relative path a sandbox reported, or
 * undefined when it would land outside the workspace (`..`, absolute paths):
 * a sandbox's report is untrusted input.
 */
export function insideWorkspace(dir: string, rel: string): string | undefined {
  if (!rel || rel.includes('\0')) return undefined;
  const root = resolve(dir);
  const full = resolve(root, rel);
  return full.startsWith(root + sep) ? full : undefined;
}

export async function readWorkspaceFile(dir: string, rel: string): Promise<Uint8Array> {
  const full = insideWorkspace(dir, rel);
  if (!full) throw new Error(`path outside the workspace: ${rel}`);
  return new Uint8Array(await readFile(full));
}

export async function writeWorkspaceFile(dir: string, rel: string, data: Uint8Array): Promise<boolean> {
  const full = insideWorkspace(dir, rel);
  if (!full) return false;
  await mkdir(dirname(full), { recursive: true });
  await writeFile(full, data);
  return true;
}

export async function removeWorkspaceFile(dir: string, rel: string): Promise<void> {
  const full = insideWorkspace(dir, rel);
  if (full) await rm(full, { force: true });
}

export function relativeToWorkspace(dir: string, full: string): string {
  return relative(resolve(dir), full).split(sep).join('/');
}
