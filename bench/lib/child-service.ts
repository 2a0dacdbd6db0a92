import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Parent side of a benchmark child process (simulator, proxy, gateway): the
 * servers run in their own processes so that the load generator never shares
 * their event loop. The child reports `{type: "ready", url}` once listening
 * and answers `call(cmd)` over the IPC channel (memory samples, stats).
 */
export interface ReadyMessage {
  type: 'ready';
  url: string;
}

interface ReplyMessage {
  type: 'reply';
  id: number;
  result?: unknown;
  error?: string;
}

export interface ChildOptions {
  /** Script next to this file's parent folder, e.g. `bench-gateway.js`, or an absolute path (another build's child). */
  script: string;
  /** Handed to the child as `process.argv[2]`, JSON-encoded. */
  config?: unknown;
  /** Extra Node flags (`--expose-gc`, `--cpu-prof`...). */
  execArgv?: string[];
  /** Runs the child through this program instead of Node (`valgrind`, whose own flags then lead `execArgv` and end with Node's path). */
  execPath?: string;
  startTimeoutMs?: number;
}

const children = new Set<ChildProcess>();
// A crashed or interrupted run must not leave servers behind.
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

export class ChildService {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.on('message', (message: ReplyMessage) => {
      if (message?.type !== 'reply') return;
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.error) waiter.reject(new Error(`${name}: ${message.error}`));
      else waiter.resolve(message.result);
    });
    child.once('exit', (code, signal) => {
      children.delete(child);
      for (const waiter of this.pending.values()) waiter.reject(new Error(`${name} exited (${code ?? signal})`));
      this.pending.clear();
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  static async start(name: string, options: ChildOptions): Promise<ChildService> {
    const script = options.script.startsWith('/') ? options.script : fileURLToPath(new URL(`../${options.script}`, import.meta.url));
    const child = fork(script, [JSON.stringify(options.config ?? {})], {
      execArgv: options.execArgv ?? [],
      ...(options.execPath ? { execPath: options.execPath } : {}),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.add(child);
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} did not start within ${options.startTimeoutMs ?? 20_000} ms`)), options.startTimeoutMs ?? 20_000);
      child.on('message', (message: ReadyMessage) => {
        if (message?.type !== 'ready') return;
        clearTimeout(timer);
        resolve(message.url);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited during start-up (code ${code})`));
      });
    });
    return new ChildService(name, child, url);
  }

  call<T = unknown>(cmd: string, arg?: unknown, timeoutMs = 30_000): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.name}: "${cmd}" got no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.child.send({ type: 'call', id, cmd, arg });
    });
  }

  /** Asks the child to close and exit (so a CPU profile gets written); kills it after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ type: 'call', id: 0, cmd: 'stop' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}
