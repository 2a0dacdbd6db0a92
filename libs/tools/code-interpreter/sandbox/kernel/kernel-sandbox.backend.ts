import { setTimeout as sleep } from 'node:timers/promises';
import type { CodeInterpreterSettings } from '../../config/code-interpreter-settings.js';
import { SandboxBoundary } from '../cgroups/sandbox-boundary.js';
import { containerMemory } from '../cpython/cpython-sandbox.backend.js';
import { ContainerDir } from '../container-fs.js';
import type { SandboxBackend, SandboxRunRequest, SandboxRunResult, SandboxStatus } from '../sandbox-backend.interface.js';
import { applyReport, type ReportedFile, workspaceStamps } from '../workspace-files.js';
import { type JupyterEndpoint, JupyterHost } from './jupyter-host.js';
import { type KernelCall, JupyterKernel } from './jupyter-kernel.js';
import { KERNEL_PACKAGES } from './kernel-availability.js';

/** Containers whose lost kernel is remembered for the next call's notice, at most (the oldest are forgotten first). */
const MAX_LOST = 10_000;
/** How long closing waits for pre-started kernels still being created. */
const CLOSE_WAIT_MS = 10_000;
/** After the driver's own interrupt and the grace, how long before the gateway stops the kernel itself. */
const REPORT_MS = 5_000;
/**
 * A kernel on a shared host never bound to a container, with no connection
 * and quiet this long, was pre-started by a process that is gone (a live one
 * connects to a kernel it started at once, and sets it up within seconds).
 */
const UNBOUND_GRACE_MS = 120_000;

/**
 * The stateful backend: one ipykernel per container, in the `cpython`
 * backend's bubblewrap sandbox, hosted by a Jupyter Server and spoken to
 * over the Jupyter messaging protocol (@jupyterlab/services). The server is
 * started and supervised by the container's home process (container
 * operations are forwarded there, so every worker's calls reach the same
 * kernel), or is the operator's (`kernel.jupyterUrl`). Variables, imports
 * and open figures persist between the container's calls; its files are
 * synchronised with the container's directory around every call.
 *
 * Held in this process only, and safe there: the kernels themselves (a
 * process cannot hold another's), the pre-started pool, and which containers
 * lost their kernel (for the next call's notice; a home that stops takes
 * that knowledge with it, and the store's own reset notice covers it).
 */
export class KernelSandboxBackend implements SandboxBackend {
  readonly name = 'kernel';
  readonly capabilities =
    'Variables, imports and open figures persist between calls in this conversation (if the session is ever reset, the result says so). ' +
    `Installed: ${KERNEL_PACKAGES.join(', ')} and the standard library; figures left open are shown as images.`;
  private readonly live = new Map<string, JupyterKernel>();
  private readonly pool: JupyterKernel[] = [];
  /** The server this process started, unless the operator runs one. */
  private readonly host: JupyterHost | undefined;
  private readonly lost = new Map<string, string>();
  private readonly waiters: Array<() => void> = [];
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;
  readonly sessionsOutliveHomes: boolean;

  constructor(
    private readonly settings: CodeInterpreterSettings,
    readonly boundary: SandboxBoundary = SandboxBoundary.for(settings),
  ) {
    this.sessionsOutliveHomes = Boolean(settings.kernel.jupyterUrl);
    if (!settings.kernel.jupyterUrl) {
      this.host = new JupyterHost(settings);
      // A server that exited took every kernel with it: each of those containers is told on its next call.
      this.host.onExit(() => {
        for (const k of [...this.live.values(), ...this.pool]) k.kill();
      });
    }
    this.sweeper = setInterval(() => this.sweep(), Math.min(30_000, Math.max(250, settings.kernel.idleMs / 4)));
    this.sweeper.unref();
  }

  async warmUp(): Promise<void> {
    this.refill();
    await Promise.all(this.pool.map((k) => k.ready));
  }

  /** How many kernels this process holds (bound, and pre-started), and the server's process (the kernels' sandboxes are under it). */
  stats(): { live: number; pooled: number; hostPid: number | undefined } {
    return { live: this.live.size, pooled: this.pool.length, hostPid: this.host?.pid };
  }

  /** The kernel host this backend uses (its own server's, or the operator's). */
  endpoint(): Promise<JupyterEndpoint> {
    if (this.host) return this.host.endpoint();
    return Promise.resolve({ url: this.settings.kernel.jupyterUrl!, token: this.settings.kernel.jupyterToken ?? '' });
  }

  /** The Jupyter kernel id of a container's live kernel, if it has one. */
  kernelId(session: string): string | undefined {
    return this.live.get(session)?.id;
  }

  async run(req: SandboxRunRequest): Promise<SandboxRunResult> {
    if (req.signal.aborted) return empty('aborted', 'the call was cancelled');
    let lostReason = this.lost.get(req.session);
    this.lost.delete(req.session);
    const hadKernel = this.live.has(req.session);
    const kernel = await this.kernelFor(req);
    if (!kernel) return empty('aborted', 'the call was cancelled');
    // On a shared host, a container that ran code before (here or in another process) and whose kernel is not there any more.
    if (this.sessionsOutliveHomes && !hadKernel && !kernel.adopted && (req.priorCalls ?? 0) > 0) lostReason ??= 'the kernel host no longer had its kernel';
    kernel.busy = true;
    try {
      const result = await this.runOn(kernel, req);
      if (lostReason) result.message = [await resetNotice(req.workspaceDir, `(${lostReason})`), result.message].filter(Boolean).join(' ');
      return result;
    } finally {
      // Nothing the call started outlives it but the kernel itself (a background process, a child it forgot).
      await this.reap(kernel);
      kernel.busy = false;
      kernel.lastUsed = Date.now();
      this.waiters.shift()?.();
      // After the call, not during it: a kernel loading the data stack would take the CPU from the call it stands in for.
      this.refill();
    }
  }

  async release(session: string): Promise<void> {
    this.lost.delete(session);
    const k = this.live.get(session);
    if (!k) {
      // The container's kernel may be on the shared host without a holder: its home died, and this process removed the container.
      if (this.sessionsOutliveHomes && !this.closed) void this.stopOnHost(session).catch(() => undefined);
      return;
    }
    this.live.delete(session);
    k.kill();
    this.waiters.shift()?.();
    // Gone when the container's delete answers, not when the server gets round to it.
    await this.cgroupOf(k)?.remove();
  }

  /** A kernel's cgroup, where this process can reach it: its own server's kernels (the launcher names it by the kernel's id). */
  private cgroupOf(kernel: JupyterKernel) {
    if (!this.host || !kernel.id || this.boundary.cgroups.version === null) return undefined;
    return this.boundary.cgroups.existing(`k-${kernel.id}`);
  }

  private async reap(kernel: JupyterKernel): Promise<void> {
    const cg = this.cgroupOf(kernel);
    if (cg?.exists()) await cg.killAllButKernel();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    // On a shared host the containers' kernels outlive this process (the next home finds them); only unbound ones stop.
    for (const k of this.live.values()) {
      if (this.sessionsOutliveHomes) k.detach();
      else k.kill();
    }
    const starting = this.pool.splice(0);
    for (const k of starting) k.kill();
    this.live.clear();
    for (const w of this.waiters.splice(0)) w();
    // A pre-started kernel the server is still creating is let finish (then shut down) before the server stops:
    // stopped midway, the server fails the creation and the Jupyter client prints its traceback to stderr.
    if (this.host && starting.length > 0) await Promise.race([Promise.all(starting.map((k) => k.ready)), sleep(CLOSE_WAIT_MS, undefined, { ref: false })]);
    await this.host?.close();
  }

  /** The container's kernel; else a pre-started one, or a new one, within `kernel.maxLive` (evicting the least recently used idle kernel). */
  private async kernelFor(req: SandboxRunRequest): Promise<JupyterKernel | undefined> {
    const bound = this.live.get(req.session);
    if (bound && !bound.exited) {
      // Most recently used last: the map's order is the eviction order.
      this.live.delete(req.session);
      this.live.set(req.session, bound);
      return bound;
    }
    this.live.delete(req.session);
    while (this.live.size >= this.settings.kernel.maxLive) {
      const idle = [...this.live].find(([, k]) => !k.busy);
      if (idle) {
        this.stop(idle[0], 'it was the least recently used of the live sessions when the gateway needed room for another');
        continue;
      }
      if (req.signal.aborted || this.closed) return undefined;
      await new Promise<void>((wake) => this.waiters.push(wake));
    }
    let kernel: JupyterKernel | undefined = await this.fromHost(req.session);
    while (!kernel) {
      const next = this.pool.shift() ?? this.start();
      if ((await next.ready) && !next.exited) kernel = next;
      else if (this.closed) return undefined;
      else if (!this.pool.length) {
        // Not even a fresh one starts: the host lacks something; the run says so.
        kernel = next;
      }
    }
    this.live.set(req.session, kernel);
    if (this.sessionsOutliveHomes && !kernel.adopted) await kernel.publish(req.session).catch(() => undefined);
    kernel.onExit(() => {
      // Died between calls (a background thread, the kernel's CPU limit): the next call is told.
      if (this.live.get(req.session) === kernel && !kernel.busy) {
        this.live.delete(req.session);
        this.forget(req.session, 'its Python process ended');
      }
    });
    return kernel;
  }

  async reapOrphans(gone: (session: string) => Promise<boolean>): Promise<void> {
    if (!this.sessionsOutliveHomes || this.closed) return;
    const endpoint = await this.endpoint();
    const now = Date.now();
    for (const target of await JupyterKernel.unheld(endpoint)) {
      const orphan = target.container !== undefined ? await gone(target.container) : now - Date.parse(target.kernel.last_activity ?? '') > UNBOUND_GRACE_MS;
      if (orphan) await JupyterKernel.stopOnHost(endpoint, target);
    }
  }

  /** On a shared host (`kernel.jupyterUrl`), the kernel another process bound to this container, if it still runs. */
  private async fromHost(session: string): Promise<JupyterKernel | undefined> {
    if (!this.sessionsOutliveHomes) return undefined;
    const endpoint = await this.endpoint();
    const found = await JupyterKernel.find(endpoint, session).catch(() => undefined);
    if (!found) return undefined;
    const kernel = new JupyterKernel(Promise.resolve(endpoint), this.maxMessageBytes(), found.kernel);
    return (await kernel.ready) ? kernel : undefined;
  }

  /** Stops the kernel the shared host holds for a container this process does not hold. */
  private async stopOnHost(session: string): Promise<void> {
    const endpoint = await this.endpoint();
    const found = await JupyterKernel.find(endpoint, session);
    if (found) await JupyterKernel.stopOnHost(endpoint, found);
  }

  private maxMessageBytes(): number {
    // A file sync carries the container's files, base64: the bound on one message from the kernel.
    return this.settings.maxContainerBytes * 3 + (8 << 20);
  }

  private start(): JupyterKernel {
    return new JupyterKernel(this.endpoint(), this.maxMessageBytes());
  }

  private refill(): void {
    if (this.closed) return;
    while (this.pool.length < this.settings.kernel.warm) {
      const k = this.start();
      k.onExit(() => {
        const at = this.pool.indexOf(k);
        if (at >= 0) this.pool.splice(at, 1);
      });
      this.pool.push(k);
    }
  }

  private stop(session: string, reason: string): void {
    const k = this.live.get(session);
    this.live.delete(session);
    k?.kill();
    this.forget(session, reason);
  }

  private forget(session: string, reason: string): void {
    this.lost.delete(session);
    this.lost.set(session, reason);
    if (this.lost.size > MAX_LOST) this.lost.delete(this.lost.keys().next().value as string);
  }

  private sweep(): void {
    const cutoff = Date.now() - this.settings.kernel.idleMs;
    for (const [session, k] of [...this.live]) {
      if (!k.busy && k.lastUsed < cutoff) this.stop(session, `it was idle for more than ${Math.round(this.settings.kernel.idleMs / 1000)} s`);
    }
  }

  private async runOn(kernel: JupyterKernel, req: SandboxRunRequest): Promise<SandboxRunResult> {
    const { put, remove, stamps } = await this.changesFor(kernel, req.workspaceDir);
    const maxReportBytes = this.settings.maxContainerBytes * 2 + (1 << 20);
    const onAbort = (): void => kernel.kill();
    req.signal.addEventListener('abort', onAbort, { once: true });
    // The kernel is interrupted at the time limit; this is the backstop should the program not return to it.
    let killed = false;
    const hard = setTimeout(
      () => {
        killed = true;
        kernel.kill();
      },
      req.limits.timeoutMs + req.limits.graceMs + REPORT_MS,
    );
    let call: KernelCall | undefined;
    try {
      call = await kernel.run(put, remove, kernel.synced === undefined, req.code, { timeoutMs: req.limits.timeoutMs, maxOutputBytes: req.limits.maxOutputBytes, maxReportBytes });
    } finally {
      clearTimeout(hard);
      req.signal.removeEventListener('abort', onAbort);
    }
    kernel.synced = stamps;
    if (!call) {
      this.live.delete(req.session);
      return empty('crashed', 'the Python kernel could not start; is bubblewrap installed with python3-ipykernel, python3-jupyter-server, -numpy, -pandas and -matplotlib?');
    }
    const ended = this.endOf(kernel, call, req, killed);
    const keep = !req.signal.aborted && !killed && call.status !== 'broken' && call.status !== 'exited';
    const files = keep ? [...call.files, ...(await figureFiles(req.workspaceDir, call))] : [];
    const applied = keep ? await applyReport(req.workspaceDir, files, call.deleted, req.limits.maxFileBytes) : { changed: [], truncated: false };
    if (keep) kernel.synced = await workspaceStamps(req.workspaceDir);
    if (ended.status === 'timeout' || ended.status === 'memory' || ended.status === 'crashed' || ended.status === 'aborted') {
      // The session is not trusted past these: a fresh kernel next time, and this result says so.
      this.live.delete(req.session);
      kernel.kill();
      if (ended.status === 'aborted') this.forget(req.session, 'the call before was cancelled');
      else ended.message = `${ended.message} ${await resetNotice(req.workspaceDir, 'because of this')}`;
    }
    return {
      ...ended,
      stdout: call.stdout,
      stderr: call.stderr,
      outputTruncated: call.outputTruncated,
      changedFiles: applied.changed,
      filesTruncated: applied.truncated,
    };
  }

  /** What the kernel lacks of the container's directory since it was last given it (everything, for a new kernel). */
  private async changesFor(kernel: JupyterKernel, dir: string): Promise<{ put: ReportedFile[]; remove: string[]; stamps: Map<string, string> }> {
    const workspace = new ContainerDir(dir);
    await workspace.create();
    const stamps = await workspaceStamps(dir);
    const put: ReportedFile[] = [];
    for (const [path, stamp] of stamps) {
      if (kernel.synced?.get(path) === stamp) continue;
      const data = await workspace.read(path).catch(() => undefined);
      if (data) put.push({ path, data });
    }
    const remove = [...(kernel.synced?.keys() ?? [])].filter((p) => !stamps.has(p));
    return { put, remove, stamps };
  }

  private endOf(kernel: JupyterKernel, call: KernelCall, req: SandboxRunRequest, killed: boolean): { status: SandboxStatus; message?: string } {
    const timeLimit = `The code was stopped after ${req.limits.timeoutMs} ms (the time limit).`;
    if (req.signal.aborted) return { status: 'aborted', message: 'the call was cancelled' };
    if (killed || call.status === 'timeout') return { status: 'timeout', message: timeLimit };
    if (call.status === 'ok' || call.status === 'error') return { status: call.status };
    if (call.status === 'memory') return { status: 'memory', message: `The code ran out of memory (limit ${req.limits.memoryLimitMb} MB).` };
    // The container's cgroup was full and the OOM killer took the kernel.
    if (call.status === 'exited' && (this.cgroupOf(kernel)?.oomKills() ?? 0) > 0) return { status: 'memory', message: containerMemory(req) };
    if (call.status === 'broken') return { status: 'crashed', message: 'The Python kernel sent more than a call may and was stopped.' };
    return { status: 'crashed', message: 'The Python process ended during the run (os._exit, a signal or a crash).' };
  }
}

/**
 * The figures the cell displayed, as `figure_N.png` (the first numbers free
 * in the workspace and among the files the run wrote): one image per figure.
 */
async function figureFiles(dir: string, call: KernelCall): Promise<ReportedFile[]> {
  if (!call.images.length) return [];
  const taken = new Set([...(await workspaceStamps(dir)).keys(), ...call.files.map((f) => f.path)]);
  const out: ReportedFile[] = [];
  let n = 1;
  for (const data of call.images) {
    while (taken.has(`figure_${n}.png`)) n++;
    taken.add(`figure_${n}.png`);
    out.push({ path: `figure_${n}.png`, data });
  }
  return out;
}

/** What the model reads when its session was reset: said plainly, with the files that remain. */
async function resetNotice(dir: string, why: string): Promise<string> {
  const files = [...(await workspaceStamps(dir).catch(() => new Map<string, string>())).keys()].sort();
  const where = files.length ? `Files still in /mnt/data: ${files.map((f) => `/mnt/data/${f}`).join(', ')}.` : 'No files are in /mnt/data.';
  return `The Python session of this container was reset ${why}: variables, imports and open figures are gone. ${where}`;
}

function empty(status: SandboxStatus, message: string): SandboxRunResult {
  return { status, stdout: '', stderr: '', outputTruncated: false, filesTruncated: false, changedFiles: [], message };
}
