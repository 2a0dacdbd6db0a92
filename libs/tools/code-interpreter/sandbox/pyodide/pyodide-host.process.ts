import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SandboxStatus } from '../sandbox-backend.interface.js';

export interface HostFile {
  path: string;
  data: Uint8Array;
}

export interface HostRunMessage {
  code: string;
  files: HostFile[];
  deletes: string[];
  limits: { timeoutMs: number; graceMs: number; maxOutputBytes: number; maxFileBytes: number };
}

export interface HostRunResult {
  status: SandboxStatus;
  stdout: string;
  stderr: string;
  outputTruncated: boolean;
  filesTruncated: boolean;
  files: HostFile[];
  deleted: string[];
  /** The program ended the interpreter (`os._exit`): it is replaced, though the run itself completed. */
  exited?: boolean;
  message?: string;
}

const HOST_SCRIPT = 'pyodide-host.mjs';

/**
 * The host scripts are plain ES modules run by a bare `node` (no TypeScript
 * loader in the sandbox). They sit beside this file in the source tree; a
 * compiled build has no copy beside the compiled file, so look in the source
 * tree of the package it came from.
 */
export function hostScriptDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = join(here, 'host');
  if (existsSync(join(beside, HOST_SCRIPT))) return beside;
  let dir = here;
  while (dirname(dir) !== dir) {
    const candidate = join(dir, 'libs/tools/code-interpreter/sandbox/pyodide/host');
    if (existsSync(join(dir, 'package.json')) && existsSync(join(candidate, HOST_SCRIPT))) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`cannot find the Pyodide sandbox host script (${HOST_SCRIPT})`);
}

export function pyodideDistDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('pyodide/package.json'));
}

/** Node flags of the sandbox host: what it may do, and nothing else. */
export function hostArgs(hostDir: string, pyodideDir: string, memoryLimitMb: number): string[] {
  const pages = Math.floor((memoryLimitMb * 1024 * 1024) / 65536);
  return [
    '--experimental-permission',
    // Reads: the Python runtime and the host scripts. No --allow-fs-write,
    // no --allow-child-process, no --allow-addons.
    `--allow-fs-read=${join(resolve(pyodideDir), '*')}`,
    `--allow-fs-read=${join(resolve(hostDir), '*')}`,
    // The interpreter runs on a worker thread so that the host's own thread
    // can interrupt it; the worker inherits every restriction above.
    '--allow-worker',
    // eval and new Function: a Python program that reaches a JS function
    // could otherwise compile its way to `import('node:net')`.
    '--disallow-code-generation-from-strings',
    // Python's heap is WASM memory: this caps it; allocations past it raise MemoryError.
    `--wasm-max-mem-pages=${pages}`,
    '--max-old-space-size=256',
    '--no-warnings',
    join(hostDir, HOST_SCRIPT),
    pyodideDir.endsWith('/') ? pyodideDir : `${pyodideDir}/`,
    '192',
  ];
}

/** How a host starts: from a memory snapshot, or cold (and then perhaps making the snapshot). */
export interface HostBoot {
  snapshot?: Uint8Array;
  makeSnapshot: boolean;
  /** Pure-Python wheels, put on the import path of the interpreter. */
  wheels: HostFile[];
}

interface Pending {
  resolve(result: HostRunResult): void;
  killTimer: NodeJS.Timeout;
  /** Detaches the abort listener: one signal may serve many calls. */
  detach(): void;
}

/**
 * One sandbox host process with one loaded interpreter. It runs one program
 * at a time; the pool decides which conversation it belongs to.
 */
export class PyodideHostProcess {
  readonly ready: Promise<number>;
  private readonly child: ChildProcess;
  private pending: Pending | null = null;
  private nextId = 1;
  private exited = false;
  private readonly exitListeners: Array<() => void> = [];
  /** Workspace stamps as this interpreter's /mnt/data last saw them. */
  stamps = new Map<string, string>();
  session: string | null = null;
  busy = false;
  lastUsed = Date.now();

  constructor(hostDir: string, pyodideDir: string, memoryLimitMb: number, boot: Promise<HostBoot>, onSnapshot?: (data: Uint8Array) => void) {
    this.child = spawn(process.execPath, hostArgs(hostDir, pyodideDir, memoryLimitMb), {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
      // The sandbox gets no configuration, credentials or paths from the gateway's environment.
      env: {},
    });
    let stderr = '';
    this.child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString();
    });
    this.ready = new Promise<number>((resolveReady, rejectReady) => {
      this.child.on('message', (msg: any) => {
        if (msg?.type === 'ready') resolveReady(msg.bootMs);
        else if (msg?.type === 'snapshot') onSnapshot?.(msg.data as Uint8Array);
        else if (msg?.type === 'result') this.settle(msg as HostRunResult);
      });
      this.child.on('exit', (code, signal) => {
        this.exited = true;
        rejectReady(new Error(`sandbox host exited before it was ready (${signal ?? code}): ${stderr.trim().slice(0, 500)}`));
        this.settle({
          status: 'crashed',
          stdout: '',
          stderr: '',
          outputTruncated: false,
          filesTruncated: false,
          files: [],
          deleted: [],
          message: 'the interpreter process stopped unexpectedly',
        });
        for (const l of this.exitListeners) l();
      });
      this.child.on('error', (err) => rejectReady(err));
    });
    this.ready.catch(() => undefined);
    void boot.then((b) => {
      if (!this.exited) this.child.send({ type: 'boot', ...b });
    });
  }

  get alive(): boolean {
    return !this.exited;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  onExit(listener: () => void): void {
    if (this.exited) listener();
    else this.exitListeners.push(listener);
  }

  /**
   * Runs one program. The host interrupts it at the deadline and stops the
   * interpreter after the grace period; should the host itself stop
   * answering, this process is killed a little later still.
   */
  run(message: HostRunMessage, signal: AbortSignal): Promise<HostRunResult> {
    if (this.pending) throw new Error('sandbox host is busy');
    if (this.exited) return Promise.resolve(crashed('the interpreter process is not running'));
    const id = this.nextId++;
    return new Promise<HostRunResult>((resolveRun) => {
      const killTimer = setTimeout(
        () => {
          this.kill();
          this.settle({ ...crashed('the program did not stop after its time limit; its interpreter was stopped'), status: 'timeout' });
        },
        message.limits.timeoutMs + message.limits.graceMs + 3_000,
      );
      const onAbort = (): void => {
        this.kill();
        this.settle({ ...crashed('the call was cancelled'), status: 'aborted' });
      };
      this.pending = { resolve: resolveRun, killTimer, detach: () => signal.removeEventListener('abort', onAbort) };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.child.send({ type: 'run', id, ...message });
    });
  }

  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }

  private settle(result: HostRunResult): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    clearTimeout(p.killTimer);
    p.detach();
    p.resolve(result);
  }
}

function crashed(message: string): HostRunResult {
  return { status: 'crashed', stdout: '', stderr: '', outputTruncated: false, filesTruncated: false, files: [], deleted: [], message };
}
