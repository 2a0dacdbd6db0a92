import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Logger } from '@nestjs/common';
import type { CodeInterpreterSettings } from '../../config/code-interpreter-settings.js';
import type { SandboxBackend, SandboxRunRequest, SandboxRunResult } from '../sandbox-backend.interface.js';
import { ContainerDir, UnsafeContainerFileError } from '../container-fs.js';
import { applyReport, workspaceStamps } from '../workspace-files.js';
import { type HostFile, PyodideHostProcess, hostScriptDir, pyodideDistDir } from './pyodide-host.process.js';

/**
 * The embedded backend: a pool of sandbox host processes, each with one
 * loaded Pyodide interpreter.
 *
 * An interpreter belongs to one container at a time (its Python globals
 * and its in-memory /mnt/data persist between that container's calls, as a
 * notebook kernel does) and is never handed to another: when the pool is
 * full, the least recently used idle interpreter is stopped and a fresh one
 * started. Unbound interpreters are kept loaded (`warmWorkers`) so that a
 * new conversation does not wait for Python to start. After a timeout, a
 * memory exhaustion or a crash the interpreter is replaced.
 */
export class PyodideSandboxBackend implements SandboxBackend {
  readonly name = 'pyodide';
  readonly capabilities: string;
  private readonly logger = new Logger('CodeInterpreter');
  private readonly hostDir = hostScriptDir();
  private readonly pyodideDir = pyodideDistDir();
  private readonly spares: PyodideHostProcess[] = [];
  private readonly bound = new Map<string, PyodideHostProcess>();
  private readonly waiters: Array<() => void> = [];
  /** Every host process not yet exited, bound, spare or already killed, so that close() can wait for them. */
  private readonly running = new Set<PyodideHostProcess>();
  private closed = false;
  /** A snapshot of a freshly loaded interpreter; every host after the first starts from it. */
  private snapshot: Promise<Uint8Array | undefined> | undefined;
  /** Host processes started, for the benchmark and the tests. */
  started = 0;

  /** Read once: the same bytes go to every interpreter. */
  private readonly wheels: HostFile[];

  constructor(private readonly settings: CodeInterpreterSettings) {
    this.wheels = settings.wheels.map((path) => ({ path: basename(path), data: new Uint8Array(readFileSync(path)) }));
    const extra = settings.wheels.map((w) => basename(w).split('-')[0]);
    this.capabilities =
      'This is Pyodide (Python in WebAssembly): the standard library only' +
      (extra.length ? ` plus ${extra.join(', ')}` : '') +
      '; numpy, pandas, matplotlib and scipy are NOT installed and nothing can be installed. ' +
      'Variables usually persist between calls in this conversation, but are lost without notice when the gateway gives the interpreter to another conversation.';
  }

  async warmUp(): Promise<void> {
    this.replenish();
    await Promise.all(this.spares.map((h) => h.ready.catch(() => undefined)));
  }

  async run(req: SandboxRunRequest): Promise<SandboxRunResult> {
    const host = await this.acquire(req.session, req.signal);
    if (!host) return failure('aborted', 'the call was cancelled before an interpreter was free');
    try {
      try {
        await host.ready;
      } catch (err) {
        this.logger.error(`sandbox host failed to start: ${(err as Error).message}`);
        return failure('crashed', 'the Python interpreter failed to start');
      }
      return await this.runOn(host, req);
    } finally {
      host.busy = false;
      host.lastUsed = Date.now();
      this.wake();
    }
  }

  release(session: string): void {
    const host = this.bound.get(session);
    if (!host) return;
    this.bound.delete(session);
    host.kill();
    this.replenish();
  }

  /** Kills every host process and resolves once they have exited, so no child outlives the gateway. */
  async close(): Promise<void> {
    this.closed = true;
    const hosts = [...this.running].filter((h) => h.pid !== undefined);
    const exited = hosts.map((h) => new Promise<void>((resolve) => h.onExit(resolve)));
    for (const h of hosts) h.kill();
    this.spares.length = 0;
    this.bound.clear();
    for (const w of this.waiters.splice(0)) w();
    await Promise.all(exited);
  }

  /** Live host processes (bound and spare), for tests and the benchmark. */
  processIds(): number[] {
    return [...this.spares, ...this.bound.values()]
      .filter((h) => h.alive)
      .map((h) => h.pid!)
      .filter(Boolean);
  }

  private async runOn(host: PyodideHostProcess, req: SandboxRunRequest): Promise<SandboxRunResult> {
    const workspace = new ContainerDir(req.workspaceDir);
    const disk = await workspaceStamps(req.workspaceDir);
    const files: HostFile[] = [];
    for (const [path, stamp] of disk) {
      if (host.stamps.get(path) === stamp) continue;
      try {
        files.push({ path, data: await workspace.read(path) });
      } catch (err) {
        // Replaced by a link since the listing: not the container's file, not sent.
        if (!(err instanceof UnsafeContainerFileError)) throw err;
      }
    }
    const deletes = [...host.stamps.keys()].filter((p) => !disk.has(p));
    const result = await host.run(
      {
        code: req.code,
        files,
        deletes,
        limits: { timeoutMs: req.limits.timeoutMs, graceMs: req.limits.graceMs, maxOutputBytes: req.limits.maxOutputBytes, maxFileBytes: req.limits.maxFileBytes },
      },
      req.signal,
    );
    const applied = await applyReport(req.workspaceDir, result.files ?? [], result.deleted ?? [], req.limits.maxFileBytes);
    host.stamps = await workspaceStamps(req.workspaceDir);
    if ((result.status !== 'ok' && result.status !== 'error') || result.exited) {
      // A timed-out, exhausted or crashed interpreter is not trusted again;
      // the container's files on disk survive, its Python state does not.
      this.bound.delete(req.session);
      host.kill();
      this.replenish();
    }
    return {
      status: result.status,
      stdout: result.stdout,
      stderr: result.stderr,
      outputTruncated: result.outputTruncated,
      filesTruncated: result.filesTruncated || applied.truncated,
      changedFiles: applied.changed,
      message: result.exited
        ? 'The program ended the interpreter (os._exit); variables from earlier calls are gone, files in /mnt/data are kept.'
        : (defaultMessage(result.status, req) ?? result.message),
    };
  }

  /** The session's interpreter, a spare, a new one, or one taken from the least recently used idle session. */
  private async acquire(session: string, signal: AbortSignal): Promise<PyodideHostProcess | undefined> {
    for (;;) {
      if (this.closed || signal.aborted) return undefined;
      const own = this.bound.get(session);
      if (own && !own.alive) this.bound.delete(session);
      else if (own && !own.busy) return this.take(own, session);
      else if (!own) {
        const spare = this.takeSpare();
        if (spare) return this.take(spare, session);
        if (this.count() < this.settings.maxWorkers) return this.take(this.spawn(), session);
        const idle = [...this.bound.entries()].filter(([, h]) => !h.busy).sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
        if (idle) {
          this.bound.delete(idle[0]);
          idle[1].kill();
          return this.take(this.spawn(), session);
        }
      }
      await new Promise<void>((wake) => {
        const onAbort = (): void => wake();
        signal.addEventListener('abort', onAbort, { once: true });
        this.waiters.push(() => {
          signal.removeEventListener('abort', onAbort);
          wake();
        });
      });
    }
  }

  private take(host: PyodideHostProcess, session: string): PyodideHostProcess {
    if (host.session !== session) {
      host.session = session;
      host.stamps = new Map();
    }
    host.busy = true;
    this.bound.set(session, host);
    queueMicrotask(() => this.replenish());
    return host;
  }

  private takeSpare(): PyodideHostProcess | undefined {
    while (this.spares.length > 0) {
      const h = this.spares.shift()!;
      if (h.alive) return h;
    }
    return undefined;
  }

  private count(): number {
    return this.spares.filter((h) => h.alive).length + [...this.bound.values()].filter((h) => h.alive).length;
  }

  private spawn(): PyodideHostProcess {
    let host: PyodideHostProcess;
    if (this.snapshot) {
      const boot = this.snapshot.then((snapshot) => ({ snapshot, makeSnapshot: false, wheels: this.wheels }));
      host = new PyodideHostProcess(this.hostDir, this.pyodideDir, this.settings.memoryLimitMb, boot);
    } else {
      // The first host starts cold and makes the snapshot; hosts spawned
      // meanwhile wait for it rather than competing for the CPU cold.
      let deliver!: (s: Uint8Array | undefined) => void;
      this.snapshot = new Promise((resolveSnapshot) => (deliver = resolveSnapshot));
      host = new PyodideHostProcess(this.hostDir, this.pyodideDir, this.settings.memoryLimitMb, Promise.resolve({ makeSnapshot: true, wheels: this.wheels }), (data) =>
        deliver(data),
      );
      host.ready.then(
        () => deliver(undefined),
        () => {
          // The maker died before the snapshot: let the next host try again.
          this.snapshot = undefined;
          deliver(undefined);
        },
      );
    }
    this.started++;
    this.running.add(host);
    host.onExit(() => {
      this.running.delete(host);
      const i = this.spares.indexOf(host);
      if (i >= 0) this.spares.splice(i, 1);
      if (host.session && this.bound.get(host.session) === host) this.bound.delete(host.session);
      this.wake();
      if (!this.closed) setImmediate(() => this.replenish());
    });
    return host;
  }

  private replenish(): void {
    if (this.closed) return;
    while (this.spares.filter((h) => h.alive).length < this.settings.warmWorkers && this.count() < this.settings.maxWorkers) {
      this.spares.push(this.spawn());
    }
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

function failure(status: SandboxRunResult['status'], message: string): SandboxRunResult {
  return { status, stdout: '', stderr: '', outputTruncated: false, filesTruncated: false, changedFiles: [], message };
}

function defaultMessage(status: SandboxRunResult['status'], req: SandboxRunRequest): string | undefined {
  switch (status) {
    case 'timeout':
      return `The code was stopped after ${req.limits.timeoutMs} ms (the time limit); variables from earlier calls are gone, files in /mnt/data are kept.`;
    case 'memory':
      return `The code ran out of memory (limit ${req.limits.memoryLimitMb} MB); variables from earlier calls are gone, files in /mnt/data are kept.`;
    case 'crashed':
      return 'The Python interpreter stopped while running this code (a sandbox restriction or a crash); variables from earlier calls are gone, files in /mnt/data are kept.';
    default:
      return undefined;
  }
}
