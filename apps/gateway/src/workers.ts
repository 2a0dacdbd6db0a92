import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { Logger } from '@nestjs/common';

/** `server.workers`, or one per core. */
export function workerCount(configured: number | undefined): number {
  return configured ?? availableParallelism();
}

/**
 * The primary of worker mode: forks `count` gateways that share the listening
 * port (the primary hands connections out round-robin), replaces a worker
 * that dies, and on SIGTERM/SIGINT passes the signal on and exits when every
 * worker has drained. Each worker is a full gateway; state they must share
 * lives in the store (SQLite in WAL mode across processes, or PostgreSQL).
 */
const SECRETS_REQUEST = 'switchyard:secret-env?';
const SECRETS_MESSAGE = 'switchyard:secret-env';

/**
 * The credentials a worker needs (`API_KEYS`, `UPSTREAM_API_KEY`, ...), sent
 * by the primary over the cluster's IPC channel: the primary took them out
 * of its environment, so a worker is forked without them and even its
 * `/proc/<pid>/environ` never holds them.
 */
export function secretsFromPrimary(): Promise<Record<string, string>> {
  return new Promise((resolve) => {
    const onMessage = (msg: { type?: string; env?: Record<string, string> }) => {
      if (msg?.type !== SECRETS_MESSAGE) return;
      process.off('message', onMessage);
      resolve(msg.env ?? {});
    };
    process.on('message', onMessage);
    // Asked for once listening: a message that arrives before a listener is dropped.
    process.send!({ type: SECRETS_REQUEST });
  });
}

export function runPrimary(count: number, secrets: Record<string, string> = {}): void {
  const logger = new Logger('Switchyard');
  let stopping = false;
  // A worker that dies before it ever listened failed to boot (bad config, port
  // taken): respawning it would only loop, so the whole gateway stops.
  const listening = new Set<number>();
  const fork = (): Worker => cluster.fork();
  cluster.on('message', (worker, msg: { type?: string }) => {
    if (msg?.type === SECRETS_REQUEST) worker.send({ type: SECRETS_MESSAGE, env: secrets });
  });
  cluster.on('listening', (worker) => listening.add(worker.id));
  cluster.on('exit', (worker, code, signal) => {
    const booted = listening.delete(worker.id);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    if (!booted) {
      logger.error(`worker ${worker.process.pid} exited during start-up (${signal ?? code}); stopping.`);
      stopping = true;
      for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
      process.exitCode = typeof code === 'number' && code !== 0 ? code : 1;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(process.exitCode);
      return;
    }
    logger.warn(`worker ${worker.process.pid} exited (${signal ?? code}); starting another.`);
    fork();
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  logger.log(`starting ${count} workers`);
  for (let i = 0; i < count; i++) fork();
}

export const isWorker = (): boolean => cluster.isWorker;
export const workerId = (): number | null => (cluster.isWorker ? (cluster.worker?.id ?? null) : null);
