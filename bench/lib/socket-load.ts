import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { bodyOf, messageAt, statusOf } from './http1-framing.js';
import type { LoadOptions } from './load-generator.js';

/**
 * A closed-loop load generator on raw keep-alive sockets: `concurrency`
 * connections each send the same pre-built POST as soon as their last answer
 * ended. `load-generator.ts` does the same through `node:http`, whose client
 * costs about 90 µs of CPU per request; on a two-core host that is a quarter
 * of a core taken from the gateway under test at 3 000 requests a second.
 * This one frames the answers itself (`http1-framing.ts`) and costs a small
 * part of that. Every answer is still checked: status 200 and `expect` in
 * its body, or the request counts as an error.
 */
/** `load-generator.ts`'s options, without its per-request timeout. */
export type SocketLoadOptions = Omit<LoadOptions, 'requestTimeoutMs'>;

export interface SocketLoadResult {
  requests: number;
  errors: number;
  firstError?: string;
  durationMs: number;
  /** Good answers per second over the measured phase. */
  rps: number;
}

interface Phase {
  remaining: number;
  deadline: number;
  good: number;
  bad: number;
  firstError?: string;
}

export async function runSocketLoad(options: SocketLoadOptions): Promise<SocketLoadResult> {
  const target = new URL(options.url);
  const body = Buffer.from(options.body);
  const request = Buffer.concat([
    Buffer.from(
      `POST ${target.pathname}${target.search} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n`,
      'latin1',
    ),
    body,
  ]);
  const marker = options.expect === undefined ? undefined : Buffer.from(options.expect);
  const connections = await Promise.all(Array.from({ length: options.concurrency }, () => open(target)));
  try {
    if (options.warmupRequests) await drive(connections, request, marker, phaseOf(options.warmupRequests, options.maxDurationMs));
    const phase = phaseOf(options.maxRequests, options.maxDurationMs);
    const started = performance.now();
    await drive(connections, request, marker, phase);
    const durationMs = performance.now() - started;
    return { requests: phase.good + phase.bad, errors: phase.bad, firstError: phase.firstError, durationMs, rps: (phase.good / durationMs) * 1000 };
  } finally {
    for (const socket of connections) socket.destroy();
  }
}

function phaseOf(count: number, durationMs: number): Phase {
  return { remaining: count, deadline: performance.now() + durationMs, good: 0, bad: 0 };
}

function open(target: URL): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.hostname, port: Number(target.port) }, () => {
      socket.removeListener('error', reject);
      // A later failure surfaces as 'close', which counts the request in flight as an error.
      socket.on('error', () => undefined);
      resolve(socket);
    });
    socket.setNoDelay(true);
    socket.once('error', reject);
  });
}

/** Every connection sends, reads an answer and sends again until the phase has its count or its deadline. */
function drive(connections: Socket[], request: Buffer, marker: Buffer | undefined, phase: Phase): Promise<void> {
  return new Promise((resolve) => {
    let active = connections.length;
    const done = () => {
      if (--active === 0) resolve();
    };
    for (const socket of connections) {
      let pending: Buffer = Buffer.alloc(0);
      const sendNext = () => {
        if (phase.remaining <= 0 || performance.now() >= phase.deadline || socket.destroyed) {
          socket.removeListener('data', onData);
          socket.removeListener('close', onClose);
          return done();
        }
        phase.remaining--;
        socket.write(request);
      };
      const fail = (error: string) => {
        phase.bad++;
        phase.firstError ??= error;
      };
      const onData = (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        let message;
        try {
          message = messageAt(pending, 0, true);
        } catch (err) {
          fail(err instanceof Error ? err.message : String(err));
          socket.destroy();
          return;
        }
        if (!message) return;
        const status = statusOf(message.head);
        const answer = bodyOf(pending, message);
        if (status !== 200) fail(`HTTP ${status}: ${answer.toString('utf8', 0, 200)}`);
        else if (marker && !answer.includes(marker)) fail(`body without "${marker.toString()}": …${answer.toString('utf8', Math.max(0, answer.length - 200))}`);
        else phase.good++;
        pending = message.end === pending.length ? Buffer.alloc(0) : pending.subarray(message.end);
        sendNext();
      };
      const onClose = () => {
        fail('connection closed by the server');
        done();
      };
      socket.on('data', onData);
      socket.once('close', onClose);
      sendNext();
    }
  });
}
