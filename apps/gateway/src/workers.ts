import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
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
export function runPrimary(count: number): void {
  const logger = new Logger('Switchyard');
  let stopping = false;
  // A worker that dies before it ever listened failed to boot (bad config, port
  // taken): respawning it would only loop, so the whole gateway stops.
  const listening = new Set<number>();
  // One credential for the calls workers make to each other (a container's
  // operations forwarded to the worker holding it), random per deployment
  // unless the operator set one (replicas must share it).
  const shared = { SWITCHYARD_INTERNAL_SECRET: process.env.SWITCHYARD_INTERNAL_SECRET || randomBytes(32).toString('base64url') };
  const fork = (): Worker => cluster.fork(shared);
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
