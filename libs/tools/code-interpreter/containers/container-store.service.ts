import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { CodeInterpreterSettings } from '../config/code-interpreter-settings.js';
import { ContainerDir, containerPathParts } from '../sandbox/container-fs.js';
import { ContainerFullError, QuotaExceededError } from './container-errors.js';
import { workspaceStamps } from '../sandbox/workspace-files.js';

export interface ContainerFile {
  id: string;
  /** Relative to /mnt/data. */
  path: string;
  bytes: number;
  createdAt: number;
  /** `user`: copied in from file_ids or uploaded; `assistant`: written by the code. */
  source: 'user' | 'assistant';
}

export interface Container {
  id: string;
  name: string;
  /** The request's owner (API key hash, OIDC subject), null without authentication; only they reach it. */
  owner: string | null;
  createdAt: number;
  lastActiveAt: number;
  idleExpiryMs: number;
  memoryLimit: string | null;
  calls: number;
  /** By relative path: a path keeps its file id when the code rewrites it. */
  files: Map<string, ContainerFile>;
  dir: string;
}

/** Ids carry 128 random bits: a container id is also what grants access to it. */
function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}

const ID_PATTERN = /^cntr_[0-9a-f]{32}$/;

/**
 * Containers: one workspace directory per container (per conversation, when
 * the tool creates it), its file table, and idle expiry. Expired containers
 * lose their directory and their interpreter (`onExpire`).
 *
 * The table lives in memory: a gateway restart forgets containers (their
 * interpreters would be gone anyway); their directories are removed at the
 * next start once their idle time is over.
 */
export class ContainerStore {
  private readonly containers = new Map<string, Container>();
  private readonly root: string;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly expireListeners: Array<(id: string) => void> = [];

  constructor(private readonly settings: CodeInterpreterSettings) {
    this.root = resolve(settings.dataDir);
  }

  async start(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await this.removeAbandoned();
    const every = Math.max(250, Math.min(60_000, Math.floor(this.settings.idleExpiryMs / 4)));
    this.sweeper = setInterval(() => void this.sweep(), every);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
  }

  onExpire(listener: (id: string) => void): void {
    this.expireListeners.push(listener);
  }

  async create(options: { name?: string; owner: string | null; memoryLimit?: string | null; idleExpiryMs?: number }): Promise<Container> {
    const id = newId('cntr');
    const now = Date.now();
    const c: Container = {
      id,
      name: options.name ?? `container-${id.slice(5, 13)}`,
      owner: options.owner,
      createdAt: now,
      lastActiveAt: now,
      idleExpiryMs: options.idleExpiryMs ?? this.settings.idleExpiryMs,
      memoryLimit: options.memoryLimit ?? null,
      calls: 0,
      files: new Map(),
      dir: join(this.root, id),
    };
    await new ContainerDir(c.dir).create();
    // Marked first, counted after: of creations racing (in any worker) past the limit, none stays.
    await this.markOwner(c);
    const mine = await this.ownerContainers(c.owner);
    if (mine.length > this.settings.maxContainersPerOwner) {
      await this.unmarkOwner(c);
      await new ContainerDir(c.dir).removeAll();
      throw new QuotaExceededError(
        'maxContainersPerOwner',
        `You have reached the limit of ${this.settings.maxContainersPerOwner} containers (codeInterpreter.maxContainersPerOwner); delete one or let one expire first.`,
      );
    }
    this.containers.set(id, c);
    return c;
  }

  /**
   * Bytes of all the owner's containers, read from their directories (so
   * every worker counts the same), and what is left of the owner's quota.
   */
  async ownerRoom(owner: string | null): Promise<{ used: number; room: number }> {
    let used = 0;
    for (const id of await this.ownerContainers(owner)) {
      for (const st of (await new ContainerDir(join(this.root, id)).list()).values()) used += st.size;
    }
    return { used, room: Math.max(0, this.settings.maxBytesPerOwner - used) };
  }

  /** The owner's containers on disk: a marker per container under `.owners/<hash of the owner>/`, kept while its directory lives. */
  private async ownerContainers(owner: string | null): Promise<string[]> {
    const names = await readdir(this.ownerDir(owner)).catch(() => [] as string[]);
    const live: string[] = [];
    for (const id of names) {
      if (!ID_PATTERN.test(id)) continue;
      if (await lstat(join(this.root, id)).catch(() => undefined)) live.push(id);
      else await rm(join(this.ownerDir(owner), id), { force: true });
    }
    return live;
  }

  private ownerDir(owner: string | null): string {
    return join(
      this.root,
      '.owners',
      createHash('sha256')
        .update(owner === null ? '\0anonymous' : `key:${owner}`)
        .digest('hex'),
    );
  }

  private async markOwner(c: Container): Promise<void> {
    await mkdir(this.ownerDir(c.owner), { recursive: true });
    await writeFile(join(this.ownerDir(c.owner), c.id), '');
  }

  private async unmarkOwner(c: Container): Promise<void> {
    await rm(join(this.ownerDir(c.owner), c.id), { force: true });
  }

  /** A live container, or undefined (unknown, expired or deleted). */
  get(id: string): Container | undefined {
    if (!ID_PATTERN.test(id)) return undefined;
    const c = this.containers.get(id);
    if (!c) return undefined;
    if (Date.now() - c.lastActiveAt > c.idleExpiryMs) {
      void this.delete(id);
      return undefined;
    }
    return c;
  }

  /**
   * A live container of the owner, or undefined: another owner's container
   * is not found (a 404, as OpenAI answers), whether by id or in history.
   */
  owned(id: string, owner: string | null): Container | undefined {
    const c = this.get(id);
    return c && c.owner === owner ? c : undefined;
  }

  list(owner: string | null): Container[] {
    return [...this.containers.values()].filter((c) => c.owner === owner && this.get(c.id)).sort((a, b) => a.createdAt - b.createdAt);
  }

  touch(c: Container): void {
    c.lastActiveAt = Date.now();
  }

  async delete(id: string): Promise<boolean> {
    const c = this.containers.get(id);
    if (!c) return false;
    this.containers.delete(id);
    await new ContainerDir(c.dir).removeAll();
    await this.unmarkOwner(c);
    for (const l of this.expireListeners) l(id);
    return true;
  }

  /** Adds a file (copied in or uploaded) under /mnt/data, keeping its base name. */
  async addFile(c: Container, filename: string, data: Uint8Array): Promise<ContainerFile> {
    const name = basename(filename.replaceAll('\\', '/')) || 'file';
    containerPathParts(name);
    if (this.totalBytes(c) + data.length > this.settings.maxContainerBytes) {
      throw new ContainerFullError(`the container would exceed its ${this.settings.maxContainerBytes} bytes`);
    }
    const { used, room } = await this.ownerRoom(c.owner);
    if (data.length > room) {
      throw new QuotaExceededError(
        'maxBytesPerOwner',
        `The file does not fit in your ${this.settings.maxBytesPerOwner} bytes of container files (codeInterpreter.maxBytesPerOwner; ${used} used).`,
      );
    }
    await new ContainerDir(c.dir).write(name, data);
    return this.record(c, name, data.length, 'user');
  }

  /**
   * Records what a call changed on disk. Files past the container's byte
   * budget are removed again and reported, so one program cannot fill the
   * gateway's disk.
   */
  async recordChanges(c: Container, changed: readonly string[]): Promise<{ files: ContainerFile[]; refused: string[] }> {
    const stamps = await workspaceStamps(c.dir);
    // The owner's room as it was before this run's files (already on disk) were counted.
    let ownerRoom = this.settings.maxBytesPerOwner - (await this.ownerRoom(c.owner)).used;
    for (const path of changed) ownerRoom += Number(stamps.get(path)?.split(':')[0] ?? 0) - (c.files.get(path)?.bytes ?? 0);
    for (const path of [...c.files.keys()]) if (!stamps.has(path)) c.files.delete(path);
    const files: ContainerFile[] = [];
    const refused: string[] = [];
    const workspace = new ContainerDir(c.dir);
    let total = this.totalBytes(c);
    for (const path of changed) {
      // Only what the listing found a plain file of the container becomes a container file.
      const stamp = stamps.get(path);
      if (stamp === undefined) continue;
      const size = Number(stamp.split(':')[0]);
      const previous = c.files.get(path)?.bytes ?? 0;
      const grows = size - previous;
      if (total + grows > this.settings.maxContainerBytes || grows > ownerRoom) {
        await workspace.remove(path);
        c.files.delete(path);
        total -= previous;
        refused.push(path);
        continue;
      }
      total += grows;
      ownerRoom -= grows;
      files.push(this.record(c, path, size, 'assistant'));
    }
    // Files the program wrote without reporting (none expected) still count against the budget.
    for (const [path, stamp] of stamps) {
      if (!c.files.has(path)) this.record(c, path, Number(stamp.split(':')[0]), 'assistant');
    }
    return { files, refused };
  }

  fileById(c: Container, fileId: string): ContainerFile | undefined {
    for (const f of c.files.values()) if (f.id === fileId) return f;
    return undefined;
  }

  /** A file of any of the owner's live containers, by id: the default file source. */
  findFile(fileId: string, owner: string | null): { container: Container; file: ContainerFile } | undefined {
    for (const c of this.containers.values()) {
      const f = this.owned(c.id, owner) && this.fileById(c, fileId);
      if (f) return { container: c, file: f };
    }
    return undefined;
  }

  /** The file's bytes; `UnsafeContainerFileError` when what is under its name is no longer a plain file of the container. */
  async content(c: Container, f: ContainerFile): Promise<Buffer> {
    return new ContainerDir(c.dir).read(f.path);
  }

  async deleteFile(c: Container, f: ContainerFile): Promise<void> {
    c.files.delete(f.path);
    await new ContainerDir(c.dir).remove(f.path);
  }

  private totalBytes(c: Container): number {
    let n = 0;
    for (const f of c.files.values()) n += f.bytes;
    return n;
  }

  private record(c: Container, path: string, bytes: number, source: ContainerFile['source']): ContainerFile {
    const existing = c.files.get(path);
    const f: ContainerFile = existing ? { ...existing, bytes } : { id: newId('cfile'), path, bytes, createdAt: Date.now(), source };
    c.files.set(path, f);
    return f;
  }

  /**
   * Workspaces left by an earlier run whose idle time is over. Only
   * container-shaped names are touched (the directory may be shared), and
   * fresh ones are left alone: another gateway may be using the same folder.
   */
  private async removeAbandoned(): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(this.root)) {
      if (!ID_PATTERN.test(name) || this.containers.has(name)) continue;
      const dir = join(this.root, name);
      const st = await lstat(dir).catch(() => undefined);
      if (st && now - st.mtimeMs > this.settings.idleExpiryMs) await new ContainerDir(dir).removeAll();
    }
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    for (const c of [...this.containers.values()]) {
      if (now - c.lastActiveAt > c.idleExpiryMs) await this.delete(c.id);
    }
  }
}

export { ContainerFullError } from './container-errors.js';
