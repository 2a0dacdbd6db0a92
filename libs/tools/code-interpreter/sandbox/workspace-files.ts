import { ContainerDir, ContainerFileNameError, UnsafeContainerFileError } from './container-fs.js';

/** `size:mtimeMs` of each regular file of the workspace, keyed by relative path (links are not files). */
export async function workspaceStamps(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [path, st] of await new ContainerDir(dir).list()) out.set(path, `${st.size}:${Math.trunc(st.mtimeMs)}`);
  return out;
}

export interface ReportedFile {
  path: string;
  data: Uint8Array;
}

/**
 * Writes back what a sandbox reported it wrote and deleted. The report is
 * untrusted input: every name goes through `ContainerDir` (a bad name or a
 * link in the way is skipped, never followed), and at most `maxBytes` of
 * files are kept, the rest reported as truncated.
 */
export async function applyReport(dir: string, files: Iterable<ReportedFile>, deleted: Iterable<string>, maxBytes: number): Promise<{ changed: string[]; truncated: boolean }> {
  const workspace = new ContainerDir(dir);
  const changed: string[] = [];
  let budget = maxBytes;
  let truncated = false;
  for (const f of files) {
    if (f.data.length > budget) {
      truncated = true;
      continue;
    }
    try {
      await workspace.write(f.path, f.data);
    } catch (err) {
      if (err instanceof ContainerFileNameError || err instanceof UnsafeContainerFileError) continue;
      throw err;
    }
    budget -= f.data.length;
    changed.push(f.path);
  }
  const written = new Set(changed);
  for (const path of deleted) {
    if (!written.has(path)) await workspace.remove(path).catch(() => false);
  }
  return { changed, truncated };
}
