import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { describe, type Distribution } from './stats.js';

/**
 * A closed-loop HTTP load generator on `node:http` with a keep-alive agent:
 * `concurrency` workers each send the next request as soon as their last one
 * ended, until `maxRequests` were sent or `maxDurationMs` passed, whichever
 * comes first. Every body is read to the end and checked against `expect`.
 */
export interface LoadOptions {
  url: string;
  body: string;
  concurrency: number;
  maxRequests: number;
  maxDurationMs: number;
  /** Requests sent (at the same concurrency) before measuring; not recorded. */
  warmupRequests?: number;
  /** Text every body must contain somewhere (found across chunk boundaries), or the request counts as an error. */
  expect?: string;
  /** A single request slower than this is destroyed and counted as an error. */
  requestTimeoutMs?: number;
  /**
   * Paced: request i is sent no earlier than i / rate seconds after the
   * start, still at most `concurrency` at once (a target that falls behind
   * gets the next request as soon as a worker is free). Unset: closed loop,
   * as fast as the target answers.
   */
  ratePerSec?: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  firstError?: string;
  durationMs: number;
  /** Completed requests per second over the measured phase. */
  rps: number;
  /** Request start to last body byte. */
  latencyMs: Distribution;
  /** Request start to first body byte. */
  ttfbMs: Distribution;
  /** SSE events (blank-line separated blocks) received in total. */
  events: number;
  eventsPerSec: number;
  bytes: number;
}

export interface Sample {
  ok: boolean;
  error?: string;
  status: number;
  latencyMs: number;
  ttfbMs: number;
  events: number;
  bytes: number;
}

const BLANK_LINE = Buffer.from('\n\n');
const TAIL_BYTES = 512;

export function keepAliveAgent(sockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets, scheduling: 'lifo' });
}

/** One POST, body read to the end. Never rejects: failures come back as `ok: false`. */
export function sendOnce(agent: http.Agent, target: URL, body: Buffer, expect?: string, timeoutMs = 30_000): Promise<Sample> {
  return new Promise<Sample>((resolve) => {
    const start = performance.now();
    let firstByte = 0;
    let events = 0;
    let bytes = 0;
    let endsWithNewline = false;
    let tail: Buffer = Buffer.alloc(0);
    const marker = expect === undefined ? undefined : Buffer.from(expect);
    let found = marker === undefined;
    let settled = false;
    let status = 0;
    const finish = (ok: boolean, error?: string) => {
      if (settled) return;
      settled = true;
      const end = performance.now();
      resolve({ ok, error, status, latencyMs: end - start, ttfbMs: (firstByte || end) - start, events, bytes });
    };
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        status = res.statusCode ?? 0;
        res.on('data', (chunk: Buffer) => {
          if (firstByte === 0) firstByte = performance.now();
          bytes += chunk.length;
          if (endsWithNewline && chunk[0] === 10) events++;
          for (let i = chunk.indexOf(BLANK_LINE); i !== -1; i = chunk.indexOf(BLANK_LINE, i + 2)) events++;
          endsWithNewline = chunk[chunk.length - 1] === 10;
          if (!found && marker) {
            // The marker may straddle two chunks: also look across the seam.
            const seam = Buffer.concat([tail.subarray(-(marker.length - 1)), chunk.subarray(0, marker.length - 1)]);
            found = chunk.includes(marker) || seam.includes(marker);
          }
          tail = chunk.length >= TAIL_BYTES ? chunk.subarray(chunk.length - TAIL_BYTES) : Buffer.concat([tail, chunk]).subarray(-TAIL_BYTES);
        });
        res.on('end', () => {
          if (status !== 200) return finish(false, `HTTP ${status}: ${tail.toString('utf8').slice(0, 200)}`);
          if (!found) return finish(false, `body without "${expect}": …${tail.toString('utf8').slice(-200)}`);
          finish(true);
        });
        res.on('error', (err) => finish(false, err.message));
        res.on('close', () => finish(false, 'response closed early'));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => finish(false, err.message));
    req.end(body);
  });
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  const body = Buffer.from(options.body);
  const agent = keepAliveAgent(options.concurrency);
  try {
    if (options.warmupRequests) {
      await closedLoop(agent, target, body, options, options.warmupRequests, options.maxDurationMs, () => undefined);
    }
    const samples: Sample[] = [];
    const started = performance.now();
    await closedLoop(agent, target, body, options, options.maxRequests, options.maxDurationMs, (s) => samples.push(s));
    const durationMs = performance.now() - started;
    const good = samples.filter((s) => s.ok);
    const bad = samples.filter((s) => !s.ok);
    const events = good.reduce((n, s) => n + s.events, 0);
    return {
      requests: samples.length,
      errors: bad.length,
      firstError: bad[0]?.error,
      durationMs,
      rps: (good.length / durationMs) * 1000,
      latencyMs: describe(good.map((s) => s.latencyMs)),
      ttfbMs: describe(good.map((s) => s.ttfbMs)),
      events,
      eventsPerSec: (events / durationMs) * 1000,
      bytes: good.reduce((n, s) => n + s.bytes, 0),
    };
  } finally {
    agent.destroy();
  }
}

async function closedLoop(agent: http.Agent, target: URL, body: Buffer, options: LoadOptions, count: number, durationMs: number, record: (sample: Sample) => void): Promise<void> {
  let issued = 0;
  const start = performance.now();
  const deadline = start + durationMs;
  const interval = options.ratePerSec ? 1000 / options.ratePerSec : 0;
  const worker = async (): Promise<void> => {
    while (issued < count && performance.now() < deadline) {
      const due = start + issued++ * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (performance.now() >= deadline) return;
      record(await sendOnce(agent, target, body, options.expect, options.requestTimeoutMs));
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
}

/** A stream held open by the client until `abort()`; `firstByte` resolves once its body started. */
export interface HeldStream {
  firstByte: Promise<boolean>;
  abort(): void;
}

export function holdStream(agent: http.Agent, target: URL, body: Buffer): HeldStream {
  let markStarted!: (ok: boolean) => void;
  const firstByte = new Promise<boolean>((resolve) => (markStarted = resolve));
  const req = http.request(
    {
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': body.length },
    },
    (res) => {
      res.once('data', () => markStarted(res.statusCode === 200));
      res.on('data', () => undefined);
      res.on('error', () => markStarted(false));
      res.on('close', () => markStarted(false));
    },
  );
  req.on('error', () => markStarted(false));
  req.end(body);
  return { firstByte, abort: () => req.destroy() };
}
