import cluster, { type Worker } from 'node:cluster';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { PRIMARY_SERVICES_ENV, callPrimary, primaryOffers, servePrimary, type PrimaryService } from '#core/cluster/primary-channel.js';
import type { LineWriter } from '#observability/logging/log-lines.js';

/**
 * The CPUs the cgroup lets this process use, when a quota is set (a
 * container's CPU limit): cgroup v2 `cpu.max` ("200000 100000"), else v1
 * `cpu.cfs_quota_us` / `cpu.cfs_period_us`. Null without a quota.
 */
export function cgroupCpuLimit(root = '/sys/fs/cgroup'): number | null {
  const read = (file: string): string | null => {
    try {
      return readFileSync(join(root, file), 'utf8').trim();
    } catch {
      return null;
    }
  };
  const fraction = (quota: number, period: number): number | null => (quota > 0 && period > 0 ? quota / period : null);
  const v2 = read('cpu.max');
  if (v2 !== null) {
    const [quota, period] = v2.split(/\s+/);
    return quota === 'max' ? null : fraction(Number(quota), Number(period ?? 100_000));
  }
  for (const dir of ['cpu', 'cpu,cpuacct', '']) {
    const quota = read(join(dir, 'cpu.cfs_quota_us'));
    const period = read(join(dir, 'cpu.cfs_period_us'));
    if (quota !== null && period !== null) return fraction(Number(quota), Number(period));
  }
  return null;
}

/**
 * `server.workers`, or one per CPU this process may use: the cgroup quota when
 * one is set (a pod limited to 1.5 CPUs on a 64-core node runs 2, not 64),
 * else the cores Node sees.
 */
export function workerCount(configured: number | undefined, cgroupRoot?: string): number {
  if (configured !== undefined) return configured;
  const cores = availableParallelism();
  const quota = cgroupCpuLimit(cgroupRoot);
  return quota === null ? cores : Math.max(1, Math.min(cores, Math.ceil(quota)));
}

/**
 * The largest semi-space of each worker's young generation, in MiB. V8 lets
 * it grow to 16 MiB (32 MiB for the pair) while the app's modules load and
 * keeps it, about a quarter of an idle worker's RSS; 8 halves that, and the
 * measured CPU per request (blocking, streaming, an MCP round) did not change
 * beyond the run-to-run noise (bench/README.md, "Memory"); at 4 it looked dearer.
 */
export const WORKER_SEMI_SPACE_MIB = 8;

/**
 * The Node options a worker is forked with: the primary's own, plus the
 * semi-space cap above unless the operator chose one (in the command line or
 * `NODE_OPTIONS`, which a worker inherits but the command line would override).
 */
export function workerExecArgv(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const chosen = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((option) => /^--max[-_]semi[-_]space[-_]size(=|$)/.test(option));
  return chosen ? [...execArgv] : [...execArgv, `--max-semi-space-size=${WORKER_SEMI_SPACE_MIB}`];
}

/** Primary services of worker mode's own start-up (see `#core/cluster/primary-channel.js`). */
export const STARTED_SERVICE = 'started';
export const STARTUP_ERROR_SERVICE = 'startup-error';
export const SECRET_ENV_SERVICE = 'secret-env';

/**
 * The primary's answer to `secret-env`: the credentials a worker needs
 * (`API_KEYS`, `UPSTREAM_API_KEY`, ...). The primary took them out of its
 * environment before forking, so a worker is forked without them and even its
 * `/proc/<pid>/environ` never holds them; it asks for them over the IPC
 * channel instead (a call, not a push: a message sent before the worker
 * listens would be dropped).
 */
export function secretEnvService(secrets: Record<string, string>): PrimaryService {
  return { handle: () => secrets };
}

/** In a worker: the credentials the primary holds for it (none outside worker mode). */
export async function secretsFromPrimary(): Promise<Record<string, string>> {
  return primaryOffers(SECRET_ENV_SERVICE) ? callPrimary<Record<string, string>>(SECRET_ENV_SERVICE, null) : {};
}

export interface PrimaryOptions {
  count: number;
  /** The entry point each worker runs (this program's main module), and its arguments. */
  entry: string;
  args: readonly string[];
  /** The primary's log lines, in the format the workers use. */
  writer: LineWriter;
  /** The services the workers may call (limits, metrics, ...), besides start-up's own. */
  services: Record<string, PrimaryService>;
  /** Where a one-line start-up failure goes (stderr). */
  errors?: { write(line: string): unknown };
}

/**
 * The primary of worker mode: forks `count` gateways that share the listening
 * port (the primary hands connections out round-robin), replaces a worker
 * that dies after it started, and on SIGTERM/SIGINT passes the signal on and
 * exits when every worker has drained.
 *
 * Each worker runs the same entry point with the same arguments
 * (`cluster.setupPrimary`: a launcher such as `scripts/run-built.mjs` that
 * took its own arguments out of `process.argv` is not re-run). The protocol
 * between them is `#core/cluster/primary-channel.js`:
 * - `started` (notify, from a worker that listens): its start-up summary; the
 *   primary prints one `listening` line, with `workers`, once all have started.
 * - `startup-error` (notify): `{ message, exitCode }`, the one-line error of a
 *   worker that could not start; the primary prints it once, stops the
 *   others and exits with that code (a supervisor must not read it as a stop).
 * - the `services` given (the limits' counts, the merged metrics, ...).
 * The names are passed to the workers in `SWITCHYARD_PRIMARY_SERVICES`.
 */
export function runPrimary(options: PrimaryOptions): void {
  const { count, writer } = options;
  const errors = options.errors ?? process.stderr;
  let stopping = false;
  let failure: { message: string; exitCode: number } | null = null;
  let summaryPrinted = false;
  // Workers that listened: one that dies before that failed to boot, and respawning it would only loop.
  const started = new Set<number>();
  const live = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);
  const stopAll = (signal: NodeJS.Signals) => {
    for (const worker of live()) worker.process.kill(signal);
  };
  const exitWhenEmpty = () => {
    if (live().length === 0) process.exit(failure?.exitCode ?? (typeof process.exitCode === 'number' ? process.exitCode : 0));
  };
  const fail = (message: string, exitCode: number) => {
    if (failure) return;
    failure = { message, exitCode: exitCode || 1 };
    // Also the code of an exit with nothing left to run, should the last worker leave between two checks.
    process.exitCode = failure.exitCode;
    errors.write(`${message}\n`);
    stopping = true;
    stopAll('SIGTERM');
    exitWhenEmpty();
  };

  const names = servePrimary({
    ...options.services,
    [STARTED_SERVICE]: {
      handle(payload, worker) {
        started.add(worker.id);
        if (!summaryPrinted && started.size >= count) {
          summaryPrinted = true;
          writer.write('info', 'listening', { ...(payload as Record<string, unknown>), workers: count });
        } else if (summaryPrinted) {
          writer.write('info', 'worker started', { worker: worker.id, pid: worker.process.pid });
        }
        return null;
      },
    },
    [STARTUP_ERROR_SERVICE]: {
      handle(payload) {
        const { message, exitCode } = payload as { message: string; exitCode: number };
        fail(message, exitCode);
        return null;
      },
    },
  });
  cluster.setupPrimary({ exec: options.entry, args: [...options.args], execArgv: workerExecArgv(process.execArgv, process.env.NODE_OPTIONS) });
  const fork = (): Worker => cluster.fork({ [PRIMARY_SERVICES_ENV]: names.join(',') });

  // A worker whose IPC channel outlives its process (a child of it still holds the channel) is
  // still listed at its 'exit' and leaves the list only at its 'disconnect': check there too.
  cluster.on('disconnect', () => {
    if (stopping) exitWhenEmpty();
  });
  cluster.on('exit', (worker, code, signal) => {
    const booted = started.delete(worker.id);
    if (stopping) return exitWhenEmpty();
    if (!booted) {
      // It died without saying why (killed, crashed before its error handler): still one line.
      fail(
        `The gateway could not start: worker ${worker.process.pid} exited during start-up (${signal ?? `exit code ${code}`}).`,
        typeof code === 'number' && code !== 0 ? code : 1,
      );
      return;
    }
    writer.write('warn', 'worker exited; starting another', { worker: worker.id, pid: worker.process.pid, ...(signal ? { signal } : { code }) });
    fork();
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    writer.write('info', 'stopping', { signal, workers: live().length });
    stopAll(signal);
    exitWhenEmpty();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  writer.write('info', 'starting workers', { workers: count, pid: process.pid });
  for (let i = 0; i < count; i++) fork();
}

export const isWorker = (): boolean => cluster.isWorker;
export const workerId = (): number | null => (cluster.isWorker ? (cluster.worker?.id ?? null) : null);
