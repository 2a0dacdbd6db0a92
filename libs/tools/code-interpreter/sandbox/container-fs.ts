import { randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readdir, realpath, rename, rm, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';

/**
 * The only way the gateway touches a container's files on the host.
 *
 * A container's directory holds what tenants upload and what their programs
 * write; a program could leave a symlink, a hard link or a directory swapped
 * for a link where the gateway expects a file, and the gateway (which runs
 * with its own user's rights) must never follow it out. So no code outside
 * this module opens a container path: every read, write, listing and delete
 * goes through a `ContainerDir`, which
 *
 * - accepts only plain relative names (no `..`, `.`, empty or absolute
 *   parts, no NUL or control characters, at most 255 bytes a part);
 * - walks the directories one by one from an open descriptor of the
 *   container's root, each opened `O_DIRECTORY | O_NOFOLLOW` relative to the
 *   descriptor of its parent (through `/proc/self/fd`, Linux's `openat`), so
 *   a directory swapped for a link at any moment is refused, not followed;
 * - opens files `O_NOFOLLOW` (and `O_NONBLOCK`, so a FIFO cannot hang a
 *   read), and reads only regular files with one link whose real path lies
 *   under the container's root (a hard link to a file outside has nlink > 1);
 * - writes by creating a fresh file (`O_EXCL`) and renaming it over the name,
 *   after checking the name is absent or a plain file: a link in the way is
 *   refused, and the rename could never write through one anyway;
 * - deletes with `unlink`, which removes a link itself, never its target.
 */

/** A name the container cannot hold (a 400 naming the field that carried it). */
export class ContainerFileNameError extends Error {}

/** What is on disk under a name is not a plain file of the container (a link, a hard link, a device, ...). */
export class UnsafeContainerFileError extends Error {}

/** Bytes of one part of a path (Linux's NAME_MAX). */
export const MAX_NAME_BYTES = 255;
/** Parts of one path, and so the depth a listing descends. */
export const MAX_PATH_DEPTH = 32;
/** Entries one listing visits: a program that writes millions of files gets its first ones listed, not a stalled gateway. */
export const MAX_LISTED_ENTRIES = 100_000;

const TEMP_PREFIX = '.sy-write-';
const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The parts of a container-relative path, or a `ContainerFileNameError`
 * saying what is wrong with it. Nothing is resolved: `a/../b` is refused,
 * not normalised, since a name a sandbox reports is untrusted input.
 */
export function containerPathParts(rel: string): string[] {
  if (typeof rel !== 'string' || rel === '') throw new ContainerFileNameError('the file name is empty');
  if (rel.startsWith('/')) throw new ContainerFileNameError('the file name must be relative to /mnt/data');
  if (CONTROL.test(rel)) throw new ContainerFileNameError('the file name contains a control character');
  const parts = rel.split('/');
  if (parts.length > MAX_PATH_DEPTH) throw new ContainerFileNameError(`the path has more than ${MAX_PATH_DEPTH} parts`);
  for (const part of parts) {
    if (part === '' || part === '.' || part === '..') throw new ContainerFileNameError(`the path part "${part}" is not allowed`);
    if (Buffer.byteLength(part) > MAX_NAME_BYTES) throw new ContainerFileNameError(`a file name may be at most ${MAX_NAME_BYTES} bytes long`);
  }
  return parts;
}

export interface ContainerFileStat {
  size: number;
  mtimeMs: number;
}

interface OpenDir {
  handle: FileHandle;
  /** The directory's path for the fallback without /proc (never used to decide what to trust on Linux). */
  path: string;
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException)?.code;
}

/** A child of an open directory, resolved through the directory's descriptor rather than its path. */
function at(dir: OpenDir, name: string): string {
  return PROC_FD ? `/proc/self/fd/${dir.handle.fd}/${name}` : `${dir.path}/${name}`;
}

export class ContainerDir {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** A regular file's bytes; `UnsafeContainerFileError` for anything else under the name. */
  async read(rel: string): Promise<Buffer> {
    const parts = containerPathParts(rel);
    return this.withDir(parts.slice(0, -1), false, async (dir) => {
      const handle = await this.openFile(dir, parts.at(-1)!, rel);
      try {
        return await handle.readFile();
      } finally {
        await handle.close();
      }
    });
  }

  /** Size and modification time of a regular, single-link file; undefined when there is none. */
  async stat(rel: string): Promise<ContainerFileStat | undefined> {
    const parts = containerPathParts(rel);
    try {
      return await this.withDir(parts.slice(0, -1), false, async (dir) => {
        const st = await lstat(at(dir, parts.at(-1)!));
        return st.isFile() && st.nlink === 1 ? { size: st.size, mtimeMs: st.mtimeMs } : undefined;
      });
    } catch (err) {
      if (err instanceof UnsafeContainerFileError || code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return undefined;
      throw err;
    }
  }

  /** Writes (or replaces) a file, creating its directories; a link or other non-file in the way is refused. */
  async write(rel: string, data: Uint8Array): Promise<void> {
    const parts = containerPathParts(rel);
    const name = parts.at(-1)!;
    await this.withDir(parts.slice(0, -1), true, async (dir) => {
      const existing = await lstat(at(dir, name)).catch((err: unknown) => {
        if (code(err) === 'ENOENT') return undefined;
        throw err;
      });
      if (existing && !(existing.isFile() && existing.nlink === 1)) throw new UnsafeContainerFileError(`${rel} is not a plain file of the container (${kindOf(existing)})`);
      const temp = `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`;
      const handle = await open(at(dir, temp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
      try {
        await handle.writeFile(data);
      } catch (err) {
        await handle.close();
        await unlink(at(dir, temp)).catch(() => undefined);
        throw err;
      }
      await handle.close();
      // rename replaces the directory entry itself: even a link put there since the check is replaced, not followed.
      await rename(at(dir, temp), at(dir, name));
    });
  }

  /** Removes the name (a link is removed itself, its target untouched); false when there was nothing. */
  async remove(rel: string): Promise<boolean> {
    const parts = containerPathParts(rel);
    try {
      return await this.withDir(parts.slice(0, -1), false, async (dir) => {
        await unlink(at(dir, parts.at(-1)!));
        return true;
      });
    } catch (err) {
      if (err instanceof UnsafeContainerFileError || ['ENOENT', 'ENOTDIR', 'EISDIR', 'EPERM'].includes(code(err) ?? '')) return false;
      throw err;
    }
  }

  /**
   * Every regular, single-link file under the root, by relative path. Links
   * are neither listed nor followed; the walk stops at `MAX_PATH_DEPTH` and
   * after `MAX_LISTED_ENTRIES` entries.
   */
  async list(): Promise<Map<string, ContainerFileStat>> {
    const out = new Map<string, ContainerFileStat>();
    let budget = MAX_LISTED_ENTRIES;
    const walk = async (dir: OpenDir, prefix: string, depth: number): Promise<void> => {
      const entries = await readdir(PROC_FD ? `/proc/self/fd/${dir.handle.fd}` : dir.path, { withFileTypes: true });
      for (const e of entries) {
        if (--budget < 0) return;
        const rel = prefix ? `${prefix}/${e.name}` : e.name;
        if (e.isDirectory() && depth < MAX_PATH_DEPTH - 1) {
          const sub = await this.openDirAt(dir, e.name, false).catch(() => undefined);
          if (!sub) continue;
          try {
            await walk(sub, rel, depth + 1);
          } finally {
            await sub.handle.close();
          }
        } else if (e.isFile() && !e.name.startsWith(TEMP_PREFIX)) {
          const st = await lstat(at(dir, e.name)).catch(() => undefined);
          if (st?.isFile() && st.nlink === 1 && isValidName(rel)) out.set(rel, { size: st.size, mtimeMs: st.mtimeMs });
        }
      }
    };
    let root: OpenDir;
    try {
      root = await this.openRoot(false);
    } catch (err) {
      if (code(err) === 'ENOENT') return out;
      throw err;
    }
    try {
      await walk(root, '', 0);
    } finally {
      await root.handle.close();
    }
    return out;
  }

  /** Creates the root directory. */
  async create(): Promise<void> {
    await mkdir(this.root, { recursive: true });
  }

  /** Removes the whole container directory; `rm` unlinks links inside it rather than following them. */
  async removeAll(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }

  private async openRoot(create: boolean): Promise<OpenDir> {
    if (create) await mkdir(this.root, { recursive: true });
    const handle = await open(this.root, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    return { handle, path: this.root };
  }

  private async openDirAt(parent: OpenDir, name: string, create: boolean): Promise<OpenDir> {
    const path = at(parent, name);
    const flags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
    try {
      return { handle: await open(path, flags), path: `${parent.path}/${name}` };
    } catch (err) {
      if (code(err) === 'ENOENT' && create) {
        await mkdir(path).catch((e: unknown) => {
          if (code(e) !== 'EEXIST') throw e;
        });
        return { handle: await open(path, flags), path: `${parent.path}/${name}` };
      }
      // O_NOFOLLOW on a link: ELOOP; a file where a directory should be: ENOTDIR.
      if (code(err) === 'ELOOP' || code(err) === 'ENOTDIR') throw new UnsafeContainerFileError(`${name} is not a directory of the container`);
      throw err;
    }
  }

  /** Runs `fn` with the directory `dirs` below the root open, closing every descriptor after. */
  private async withDir<T>(dirs: readonly string[], create: boolean, fn: (dir: OpenDir) => Promise<T>): Promise<T> {
    const opened: OpenDir[] = [await this.openRoot(create)];
    try {
      for (const name of dirs) opened.push(await this.openDirAt(opened.at(-1)!, name, create));
      return await fn(opened.at(-1)!);
    } finally {
      for (const d of opened.reverse()) await d.handle.close().catch(() => undefined);
    }
  }

  private async openFile(dir: OpenDir, name: string, rel: string): Promise<FileHandle> {
    let handle: FileHandle;
    try {
      handle = await open(at(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (err) {
      if (code(err) === 'ELOOP') throw new UnsafeContainerFileError(`${rel} is a link`);
      throw err;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw new UnsafeContainerFileError(`${rel} is not a regular file (${kindOf(st)})`);
      if (st.nlink !== 1) throw new UnsafeContainerFileError(`${rel} is a hard link (${st.nlink} names)`);
      if (PROC_FD) {
        // What the descriptor really is, wherever the walk went: it must lie under the root.
        const real = await realpath(`/proc/self/fd/${handle.fd}`);
        const root = await realpath(this.root);
        if (!real.startsWith(`${root}/`)) throw new UnsafeContainerFileError(`${rel} resolves outside the container`);
      }
      return handle;
    } catch (err) {
      await handle.close();
      throw err;
    }
  }
}

function isValidName(rel: string): boolean {
  try {
    containerPathParts(rel);
    return true;
  } catch {
    return false;
  }
}

function kindOf(st: { isSymbolicLink(): boolean; isDirectory(): boolean; isFile(): boolean; nlink: number }): string {
  if (st.isSymbolicLink()) return 'a link';
  if (st.isDirectory()) return 'a directory';
  if (st.isFile()) return `a hard link with ${st.nlink} names`;
  return 'not a regular file';
}
