import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join, posix, resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import {
  type CatalogQuery,
  type ContainerRecord,
  type ContainerRecordPatch,
  type ContainerRecordStore,
  UnavailableError,
  InvalidRequestError,
  NotFoundError,
} from '#tool-sdk/index.js';
import type { CodeInterpreterSettings } from '../config/code-interpreter-settings.js';
import type { ContainerOperation } from '../homes/container-operation.js';
import { forwardOperation, HomeUnreachableError, OperationFailedError } from '../homes/home-client.js';
import type { InternalNode } from '../homes/internal-node.js';
import type { SandboxBackend } from '../sandbox/sandbox-backend.interface.js';
import { ContainerDir, ContainerFileNameError, UnsafeContainerFileError, containerPathParts } from '../sandbox/container-fs.js';
import { workspaceStamps } from '../sandbox/workspace-files.js';
import { ContainerFullError as ContainerFullFault, QuotaExceededError } from './container-errors.js';
import { runInContainer, type RunOutcome } from './container-run.js';

export interface ContainerFile {
  id: string;
  /** Relative to /mnt/data. */
  path: string;
  bytes: number;
  createdAt: number;
  /** `user`: copied in from file_ids or uploaded; `assistant`: written by the code. */
  source: 'user' | 'assistant';
}

/** A container as read from the shared record: what any process can answer about it. */
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
  /** `file_ids` already copied in. */
  copiedFileIds: string[];
  /** The node id of the process that holds its files and interpreter. */
  home: string;
  /** Its workspace, on the home's file system. */
  dir: string;
}

/** Ids carry 128 random bits: a container id is also what grants access to it. */
function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}

const ID_PATTERN = /^cntr_[0-9a-f]{32}$/;

/** An operation's failure with the code the forwarding side reports it by. */
class FailureError extends Error {
  constructor(
    readonly failure: OperationFailedError['failure'],
    message: string,
  ) {
    super(message);
  }
}

/** The container would hold more than `maxContainerBytes` (the class `containerFileError` maps to a 400). */
export { ContainerFullFault as ContainerFullError };

/**
 * A home-side failure of what the client sent or of what is in the container
 * (a bad name, a link, a full container, an owner's quota), as the failure
 * the forwarding side turns back into the same error; anything else is the
 * gateway's own fault and is passed through.
 */
function asFailure(err: unknown): unknown {
  if (err instanceof FailureError || (err as { failure?: string })?.failure) return err;
  if (err instanceof ContainerFullFault) return new FailureError('container_full', err.message);
  if (err instanceof ContainerFileNameError) return new FailureError('invalid_file_name', err.message);
  if (err instanceof UnsafeContainerFileError) return new FailureError('unsafe_container_file', err.message);
  if (err instanceof QuotaExceededError) return new FailureError(`quota_exceeded:${err.limit}`, err.message);
  return err;
}

/** The container (or the file) is gone: expired, deleted, or never was. A 404 naming it. */
export class ContainerGoneError extends NotFoundError {
  constructor(
    readonly failure: 'container_not_found' | 'file_not_found',
    message: string,
  ) {
    super(message, failure, failure === 'file_not_found' ? 'file_id' : 'container_id');
  }
}

/** A failure the home reported, as the error this process throws for it. */
function reported(err: OperationFailedError): Error {
  switch (err.failure) {
    case 'container_not_found':
    case 'file_not_found':
      return new ContainerGoneError(err.failure, err.message);
    case 'container_full':
      return new ContainerFullFault(err.message);
    case 'invalid_file_name':
      return new ContainerFileNameError(err.message);
    case 'unsafe_container_file':
      return new UnsafeContainerFileError(err.message);
    default:
      if (err.failure.startsWith('quota_exceeded:')) return new QuotaExceededError(err.failure.slice('quota_exceeded:'.length), err.message);
      return new InvalidRequestError(err.message, 'file');
  }
}

/** How often a caller re-reads the record while the home it names is not answering, before its lease lapses. */
const UNREACHABLE_RETRY_MS = 250;

/**
 * Containers, as one gateway of many processes sees them.
 *
 * The record of each (owner, name, expiry, file table, and its **home**: the
 * process holding its workspace directory and live interpreter) lives in the
 * shared record store: SQLite for the workers of one host, PostgreSQL across
 * replicas, memory for one process. Any process answers metadata from it.
 * Operations on files and code runs happen on the home: a process that is
 * not the home forwards them over the internal listener; if the home is gone
 * (its lease lapsed) the container is re-homed here, with whatever of its
 * files this process can reach (the workers of one host share `dataDir`;
 * other replicas' disks are out of reach), and the next run tells the model
 * the session was reset and which files remain.
 *
 * The home is the record's only writer, and runs one operation per
 * container at a time, so the file table is never written from two places.
 */
export class ContainerStore {
  private readonly root: string;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly expireListeners: Array<(id: string) => void | Promise<void>> = [];
  /** Per container homed here: the tail of its operation queue. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly logger = new Logger('CodeInterpreter');

  constructor(
    private readonly settings: CodeInterpreterSettings,
    private readonly records: ContainerRecordStore,
    private readonly node: InternalNode,
    private readonly backend: SandboxBackend,
  ) {
    this.root = resolve(settings.dataDir);
  }

  async start(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await this.records.init();
    // A forwarded operation's failure travels back as its code (`asFailure`), to be thrown there as here.
    await this.node.start((op, signal) =>
      this.applyHere(op, signal).catch((err: unknown) => {
        throw asFailure(err);
      }),
    );
    await this.removeAbandoned();
    const every = Math.max(250, Math.min(60_000, Math.floor(this.settings.idleExpiryMs / 4)));
    this.sweeper = setInterval(() => void this.sweep().catch((err) => this.logger.warn(`container sweep failed: ${(err as Error).message}`)), every);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    await this.node.stop();
    await this.records.close();
  }

  onExpire(listener: (id: string) => void | Promise<void>): void {
    this.expireListeners.push(listener);
  }

  async create(options: { name?: string; owner: string | null; memoryLimit?: string | null; idleExpiryMs?: number }): Promise<Container> {
    const id = newId('cntr');
    const now = Date.now();
    const record: ContainerRecord = {
      id,
      name: options.name ?? `container-${id.slice(5, 13)}`,
      owner: options.owner,
      createdAt: now,
      lastActiveAt: now,
      idleExpiryMs: options.idleExpiryMs ?? this.settings.idleExpiryMs,
      memoryLimit: options.memoryLimit ?? null,
      calls: 0,
      home: this.node.id,
      files: [],
      copiedFileIds: [],
      notice: null,
    };
    if (this.backend.boundary?.singleOwner) await this.claimSoleOwner(options.owner);
    await new ContainerDir(join(this.root, id)).create();
    // Inserted first, counted after: of creations racing (in any process) past the limit, none stays.
    await this.records.insert(record);
    const now2 = Date.now();
    const mine = (await this.records.list(record.owner)).filter((r) => !expired(r, now2));
    if (mine.length > this.settings.maxContainersPerOwner) {
      await this.records.remove(id);
      await new ContainerDir(join(this.root, id)).removeAll();
      throw new QuotaExceededError(
        'maxContainersPerOwner',
        `You have reached the limit of ${this.settings.maxContainersPerOwner} containers (codeInterpreter.maxContainersPerOwner); delete one or let one expire first.`,
      );
    }
    return this.view(record);
  }

  /**
   * Where the host gives the sandboxes no cgroup limits, the first owner to
   * make a container here is the only one served (recorded in `dataDir`, so
   * every worker sharing it agrees; a file made exclusively, so two first
   * owners cannot both win).
   */
  private async claimSoleOwner(owner: string | null): Promise<void> {
    const marker = join(this.root, '.sole-owner');
    const mine = JSON.stringify({ owner });
    try {
      await writeFile(marker, mine, { flag: 'wx', mode: 0o600 });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if ((await readFile(marker, 'utf8').catch(() => '')) === mine) return;
    throw new QuotaExceededError(
      'sandbox.allowManyOwnersWithoutLimits',
      'This gateway runs code for one owner only: its host gives the sandboxes no resource limits (codeInterpreter.sandbox.allowManyOwnersWithoutLimits).',
    );
  }

  /**
   * Bytes of all the owner's live containers, from their records (so every
   * worker and replica counts the same), and what is left of the owner's quota.
   */
  async ownerRoom(owner: string | null): Promise<{ used: number; room: number }> {
    const now = Date.now();
    let used = 0;
    for (const r of await this.records.list(owner)) if (!expired(r, now)) for (const f of r.files) used += f.bytes;
    return { used, room: Math.max(0, this.settings.maxBytesPerOwner - used) };
  }

  /** A live container, or undefined (unknown, expired or deleted). */
  async get(id: string): Promise<Container | undefined> {
    const record = await this.live(id);
    return record ? this.view(record) : undefined;
  }

  /**
   * A live container of the owner, or undefined: another owner's container
   * is not found (a 404, as OpenAI answers), whether by id or in history.
   */
  async owned(id: string, owner: string | null): Promise<Container | undefined> {
    const c = await this.get(id);
    return c && c.owner === owner ? c : undefined;
  }

  async list(owner: string | null): Promise<Container[]> {
    const now = Date.now();
    return (await this.records.list(owner)).filter((r) => !expired(r, now)).map((r) => this.view(r));
  }

  /**
   * Every owner's live containers, newest first, for the operator's console.
   * A page may hold fewer than `limit` when some listed ones expired; its
   * cursor still moves past them.
   */
  async catalog(query: CatalogQuery): Promise<{ data: Container[]; has_more: boolean; last_id: string | null }> {
    if (!this.records.catalog) return { data: [], has_more: false, last_id: null };
    const page = await this.records.catalog(query);
    const live = await Promise.all(page.data.map((e) => this.get(e.id)));
    return { data: live.filter((c): c is Container => c !== undefined), has_more: page.has_more, last_id: page.last_id };
  }

  fileById(c: Container, fileId: string): ContainerFile | undefined {
    for (const f of c.files.values()) if (f.id === fileId) return f;
    return undefined;
  }

  /** A file of any of the owner's live containers, by id: the default file source. */
  async findFile(fileId: string, owner: string | null): Promise<{ container: Container; file: ContainerFile } | undefined> {
    if (!/^cfile_[0-9a-f]{32}$/.test(fileId)) return undefined;
    const record = await this.records.findByFile(fileId, owner);
    if (!record || expired(record, Date.now())) return undefined;
    const container = this.view(record);
    const file = this.fileById(container, fileId);
    return file ? { container, file } : undefined;
  }

  /** Adds a file (copied in or uploaded) under /mnt/data, keeping its base name; `sourceId` marks a `file_ids` entry as copied. */
  async addFile(c: Container, filename: string, data: Uint8Array, sourceId?: string): Promise<ContainerFile> {
    return this.perform<ContainerFile>({ kind: 'add-file', containerId: c.id, owner: c.owner, name: filename, data, ...(sourceId ? { sourceId } : {}) });
  }

  async content(c: Container, f: ContainerFile): Promise<Buffer> {
    const { data } = await this.perform<{ data: Uint8Array }>({ kind: 'content', containerId: c.id, owner: c.owner, fileId: f.id });
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }

  async deleteFile(c: Container, f: ContainerFile): Promise<void> {
    await this.perform({ kind: 'delete-file', containerId: c.id, owner: c.owner, fileId: f.id });
  }

  /** Runs a program in the container, on its home. */
  async run(c: Container, code: string, signal: AbortSignal): Promise<RunOutcome> {
    return this.perform<RunOutcome>({ kind: 'run', containerId: c.id, owner: c.owner, code }, signal);
  }

  async delete(id: string): Promise<boolean> {
    const record = await this.records.get(id);
    if (!record) return false;
    await this.perform({ kind: 'delete', containerId: id, owner: record.owner });
    return true;
  }

  /**
   * Runs the operation on the container's home: here, forwarded to the live
   * process holding it, or here after taking over from a home that is gone.
   */
  private async perform<R>(op: ContainerOperation, signal?: AbortSignal): Promise<R> {
    let unreachableSince: number | undefined;
    for (;;) {
      signal?.throwIfAborted();
      const record = await this.live(op.containerId);
      if (!record || record.owner !== op.owner) throw new ContainerGoneError('container_not_found', `Container with id '${op.containerId}' not found.`);
      if (record.home === this.node.id) {
        try {
          return (await this.applyHere(op, signal ?? new AbortController().signal)) as R;
        } catch (err) {
          // Taken over by another process in the meantime: ask again where it lives.
          if ((err as FailureError).failure === 'not_home') continue;
          throw err;
        }
      }
      const home = await this.node.alive(record.home);
      if (!home) {
        await this.adopt(record);
        continue;
      }
      try {
        return await forwardOperation<R>(home.url, this.node.secret, op, signal);
      } catch (err) {
        if (err instanceof OperationFailedError) {
          if (err.failure === 'not_home') continue;
          throw reported(err);
        }
        if (!(err instanceof HomeUnreachableError)) throw err;
        // A home that stopped answering is taken over once its lease lapses; until then it may be pausing.
        // One that keeps renewing its lease and never answers is misconfigured, not gone.
        unreachableSince ??= Date.now();
        if (Date.now() - unreachableSince > 2 * this.settings.internal.leaseMs) {
          // The internal listener's address and the settings to check are the operator's (the request log's error_detail).
          throw new UnavailableError(`The gateway process holding container '${op.containerId}' does not answer; try again later.`, 'container_home_unreachable').withDetail(
            `the home of container '${op.containerId}' renews its lease but does not answer at ${home.url}: check codeInterpreter.internal.url (SWITCHYARD_INTERNAL_URL) and codeInterpreter.internal.host on every replica`,
          );
        }
        this.logger.warn(err.message);
        await new Promise((r) => setTimeout(r, UNREACHABLE_RETRY_MS));
      }
    }
  }

  /**
   * Takes over a container whose home is gone. Its files come along where
   * this process can reach them (the same `dataDir`); the record then lists
   * only those, and the next run's result says so.
   */
  private async adopt(record: ContainerRecord): Promise<void> {
    const dir = join(this.root, record.id);
    const present = existsSync(dir) ? await workspaceStamps(dir) : new Map<string, string>();
    const kept = record.files.filter((f) => present.has(f.path));
    const lost = record.files.filter((f) => !present.has(f.path));
    const paths = (files: typeof kept) => files.map((f) => `/mnt/data/${f.path}`).join(', ');
    // A kernel host shared by every process still holds the session: only lost files are news (the backend says if the kernel is gone too).
    const notice = this.backend.sessionsOutliveHomes
      ? lost.length
        ? `The gateway process that held this container stopped; its Python session is kept, but these files were lost: ${paths(lost)}.`
        : null
      : 'The Python session of this container was reset (the gateway process that held it stopped): variables, imports and open figures are gone. ' +
        (kept.length ? `Files still in /mnt/data: ${paths(kept)}.` : 'No files remain in /mnt/data.') +
        (lost.length ? ` Lost: ${paths(lost)}.` : '');
    await new ContainerDir(dir).create();
    if (await this.records.rehome(record.id, record.home, this.node.id, { files: kept, notice })) {
      this.logger.warn(`container ${record.id} taken over from ${record.home}, which is gone (${kept.length} of ${record.files.length} files kept)`);
    }
  }

  /** The home's side: one operation at a time per container. */
  private applyHere(op: ContainerOperation, signal: AbortSignal): Promise<Record<string, unknown>> {
    const previous = this.queues.get(op.containerId) ?? Promise.resolve();
    const next = previous.then(
      () => this.applyNow(op, signal),
      () => this.applyNow(op, signal),
    );
    const tail = next.catch(() => undefined);
    this.queues.set(op.containerId, tail);
    void tail.then(() => {
      if (this.queues.get(op.containerId) === tail) this.queues.delete(op.containerId);
    });
    return next;
  }

  private async applyNow(op: ContainerOperation, signal: AbortSignal): Promise<Record<string, unknown>> {
    const record = await this.live(op.containerId);
    if (!record || record.owner !== op.owner) throw new ContainerGoneError('container_not_found', `Container with id '${op.containerId}' not found.`);
    if (record.home !== this.node.id) throw new FailureError('not_home', 'moved');
    const c = this.view(record);
    const save = async (patch: ContainerRecordPatch): Promise<void> => {
      if (!(await this.records.update(c.id, this.node.id, { lastActiveAt: Date.now(), ...patch }))) {
        this.logger.warn(`container ${c.id} was taken over by another process during an operation`);
      }
    };
    switch (op.kind) {
      case 'add-file': {
        const f = await this.writeFile(c, op.name, op.data);
        await save({ files: [...c.files.values()], ...(op.sourceId ? { copiedFileIds: [...c.copiedFileIds, op.sourceId] } : {}) });
        return { ...f };
      }
      case 'content': {
        const f = this.fileOrGone(c, op.fileId);
        const data = await new ContainerDir(c.dir).read(f.path).catch((err: unknown) => {
          // What is under the name is no longer a plain file of the container: refused, never followed.
          if (err instanceof UnsafeContainerFileError) throw err;
          throw new ContainerGoneError('file_not_found', `File with id '${op.fileId}' not found in container '${c.id}'.`);
        });
        await save({});
        return { data: new Uint8Array(data) };
      }
      case 'delete-file': {
        const f = this.fileOrGone(c, op.fileId);
        c.files.delete(f.path);
        await new ContainerDir(c.dir).remove(f.path);
        await save({ files: [...c.files.values()] });
        return {};
      }
      case 'delete':
        await this.removeHere(c.id);
        return {};
      case 'run': {
        const outcome = await runInContainer(
          {
            settings: this.settings,
            backend: this.backend,
            room: async () => (await this.ownerRoom(c.owner)).room,
            recordChanges: (changed) => this.recordChanges(c, changed),
            read: (f) => new ContainerDir(c.dir).read(f.path),
          },
          c,
          record.notice,
          op.code,
          signal,
        );
        await save({ files: [...c.files.values()], calls: c.calls, notice: null });
        return outcome as unknown as Record<string, unknown>;
      }
    }
  }

  private fileOrGone(c: Container, fileId: string): ContainerFile {
    const f = this.fileById(c, fileId);
    if (!f) throw new ContainerGoneError('file_not_found', `File with id '${fileId}' not found in container '${c.id}'.`);
    return f;
  }

  private async writeFile(c: Container, filename: string, data: Uint8Array): Promise<ContainerFile> {
    const name = basename(filename.replaceAll('\\', '/')) || 'file';
    containerPathParts(name);
    const previous = c.files.get(name)?.bytes ?? 0;
    if (totalBytes(c) - previous + data.length > this.settings.maxContainerBytes) {
      throw new ContainerFullFault(`the container would exceed its ${this.settings.maxContainerBytes} bytes`);
    }
    const { used, room } = await this.ownerRoom(c.owner);
    if (data.length - previous > room) {
      throw new QuotaExceededError(
        'maxBytesPerOwner',
        `The file does not fit in your ${this.settings.maxBytesPerOwner} bytes of container files (codeInterpreter.maxBytesPerOwner; ${used} used).`,
      );
    }
    await new ContainerDir(c.dir).write(name, data);
    return record(c, name, data.length, 'user');
  }

  /**
   * Records what a call changed on disk. Files past the container's byte
   * budget are removed again and reported, so one program cannot fill the
   * gateway's disk.
   */
  async recordChanges(c: Container, changed: readonly string[]): Promise<{ files: ContainerFile[]; refused: string[] }> {
    const stamps = await workspaceStamps(c.dir);
    // The owner's room before this run: its record still holds the container's files as they were.
    let ownerRoom = (await this.ownerRoom(c.owner)).room;
    for (const path of [...c.files.keys()]) if (!stamps.has(path)) c.files.delete(path);
    const files: ContainerFile[] = [];
    const refused: string[] = [];
    const workspace = new ContainerDir(c.dir);
    let total = totalBytes(c);
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
      files.push(record(c, path, size, 'assistant'));
    }
    // Files the program wrote without reporting (none expected) still count against the budget.
    for (const [path, stamp] of stamps) {
      if (!c.files.has(path)) record(c, path, Number(stamp.split(':')[0]), 'assistant');
    }
    return { files, refused };
  }

  private async live(id: string): Promise<ContainerRecord | undefined> {
    if (!ID_PATTERN.test(id)) return undefined;
    const record = await this.records.get(id);
    if (!record) return undefined;
    if (expired(record, Date.now())) {
      if (record.home === this.node.id) void this.removeHere(id).catch(() => undefined);
      return undefined;
    }
    return record;
  }

  private view(r: ContainerRecord): Container {
    return {
      id: r.id,
      name: r.name,
      owner: r.owner,
      createdAt: r.createdAt,
      lastActiveAt: r.lastActiveAt,
      idleExpiryMs: r.idleExpiryMs,
      memoryLimit: r.memoryLimit,
      calls: r.calls,
      files: new Map(r.files.map((f) => [f.path, { ...f }])),
      copiedFileIds: [...r.copiedFileIds],
      home: r.home,
      dir: join(this.root, r.id),
    };
  }

  /** Removes the container with its files and interpreter (this process being its home, or its home gone). */
  private async removeHere(id: string): Promise<void> {
    await this.records.remove(id);
    await new ContainerDir(join(this.root, id)).removeAll();
    await Promise.all(this.expireListeners.map((l) => l(id)));
  }

  /**
   * Workspaces left by an earlier run whose idle time is over and that no
   * record names. Only container-shaped names are touched (the directory may
   * be shared), and fresh ones are left alone: another gateway may be using
   * the same folder.
   */
  private async removeAbandoned(): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(this.root)) {
      if (!ID_PATTERN.test(name) || (await this.records.get(name))) continue;
      const dir = join(this.root, name);
      const st = await stat(dir).catch(() => undefined);
      if (st && now - st.mtimeMs > this.settings.idleExpiryMs) await new ContainerDir(dir).removeAll();
    }
  }

  /** Expired containers homed here, or whose home is gone. */
  private async sweep(): Promise<void> {
    for (const r of await this.records.expired(Date.now())) {
      if (r.home === this.node.id || !(await this.node.alive(r.home))) await this.removeHere(r.id);
    }
    // Kernels on a shared host that a home which died left behind, for containers removed without them (any replica may sweep).
    await this.backend.reapOrphans?.(async (id) => {
      const r = await this.records.get(id);
      return !r || expired(r, Date.now());
    });
  }
}

function expired(r: ContainerRecord, now: number): boolean {
  return now - r.lastActiveAt > r.idleExpiryMs;
}

function totalBytes(c: Container): number {
  let n = 0;
  for (const f of c.files.values()) n += f.bytes;
  return n;
}

function record(c: Container, path: string, bytes: number, source: ContainerFile['source']): ContainerFile {
  const existing = c.files.get(path);
  const f: ContainerFile = existing ? { ...existing, bytes } : { id: newId('cfile'), path: posix.normalize(path), bytes, createdAt: Date.now(), source };
  c.files.set(path, f);
  return f;
}
