import cluster from 'node:cluster';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LineWriter } from '#observability/logging/log-lines.js';
import { runPrimary } from '../../../apps/gateway/src/workers.js';

/**
 * Run through the test loader: the primary of worker mode with one worker
 * that dies during start-up while a child of its own still holds its IPC
 * channel. The primary then sees the worker's `exit` while the worker is
 * still listed (connected), and its `disconnect` only when that child ends:
 * the order a loaded machine can give any dying worker.
 */
if (cluster.isPrimary) {
  runPrimary({ count: 1, entry: fileURLToPath(import.meta.url), args: [], writer: new LineWriter({ logFormat: 'json', logLevel: 'error' }), services: {} });
} else {
  // Node reads NODE_CHANNEL_FD and deletes it at start; the channel's handle still knows its fd.
  const channel = (process.channel as unknown as { fd: number }).fd;
  // The child inherits the channel as its fd 3 and keeps it open for a second after this worker is gone.
  spawn('sleep', ['1'], { stdio: ['ignore', 'ignore', 'ignore', channel], detached: false }).unref();
  process.exit(3);
}
