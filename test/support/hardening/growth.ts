import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { rawPost, type RawResponse } from '../robustness/raw-http.js';

/** Wall time of `work`, in milliseconds, from `process.hrtime` (for ratios only, never compared to a constant). */
export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await work();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

/** CPU time (user + system) of this process in milliseconds: unlike wall time, barely moved by other load on the machine. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * The median CPU time this process spends on `runs` runs of `work`, after
 * one warm-up run. Gateway and simulator share the process with the test,
 * so this is the whole cost of a request; compare sizes by ratio only.
 */
export async function medianMs(work: () => Promise<unknown>, runs = 3): Promise<number> {
  await work();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = cpuMs();
    await work();
    times.push(cpuMs() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

/**
 * How long a `/health` asked now waits, as the lesser of its wall time and
 * the CPU time this process spent until it was answered. On a quiet machine
 * the wall time is the answer; on one whose cores are taken by other work,
 * wall time mostly measures the OS scheduler, while the CPU time still says
 * how much work the event loop did before it got to `/health`. A loop
 * blocked by a request is slow by both measures.
 */
export async function probeHealth(base: string): Promise<{ ms: number; status: number }> {
  const cpuStart = cpuMs();
  const { ms, value } = await timed(() => get(`${base}/health`));
  return { ms: Math.min(ms, cpuMs() - cpuStart), status: value.status };
}

/**
 * Sends `body` and, once its bytes are out, asks `/health` on a separate
 * connection: resolves with the big answer and how long `/health` waited
 * (see `probeHealth`).
 */
export async function withHealthProbe(
  base: string,
  url: string,
  body: string,
  headers?: Record<string, string>,
): Promise<{ res: RawResponse; healthMs: number; healthStatus: number }> {
  const payload = Buffer.from(body);
  const big = rawPost(url, payload, { headers, timeoutMs: 120_000 });
  // Let the large body reach the server before probing.
  await new Promise((r) => setTimeout(r, 5));
  const probe = probeHealth(base);
  const [res, health] = await Promise.all([big, probe]);
  return { res, healthMs: health.ms, healthStatus: health.status };
}

export function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer from ${url}`)));
    req.on('error', reject);
  });
}

/**
 * Has a child process send a body with `keys` unknown top-level keys (see
 * wide-body.sender.mjs) and, once its bytes are out, asks `/health`:
 * resolves with the gateway's answer (parsed JSON line) and how long
 * `/health` waited (see `probeHealth`).
 */
export async function probeHealthDuringWideBody(base: string, mode: 'http' | 'ws', url: string, keys: number): Promise<{ answer: any; health: { ms: number; status: number } }> {
  const sender = spawn(process.execPath, [fileURLToPath(new URL('./wide-body.sender.mjs', import.meta.url)), mode, url, String(keys)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let wake = () => {};
  let buffered = '';
  sender.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    lines.push(...parts);
    wake();
  });
  const exited = new Promise<void>((done) => sender.once('exit', () => done()));
  const until = async (n: number) => {
    while (lines.length < n) {
      const more = new Promise<void>((r) => (wake = r));
      await Promise.race([more, exited]);
      if (lines.length < n && sender.exitCode !== null) throw new Error(`the sender exited after ${lines.length} line(s): ${lines.join(' | ')}`);
    }
  };
  await until(1);
  const health = await probeHealth(base);
  await until(2);
  return { answer: JSON.parse(lines[1]), health };
}

/** The median of seven `/health` probes on a gateway doing nothing else: the baseline a stall check divides by. */
export async function idleHealthMs(base: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 7; i++) times.push((await probeHealth(base)).ms);
  times.sort((a, b) => a - b);
  return times[3];
}

/**
 * How long a `/health` may wait while hostile work runs: 20x the idle probe
 * taken in the same test, the idle time floored at 10 ms so that a
 * millisecond baseline does not turn one chunk's pass or a GC pause on a
 * machine slowed tenfold into a failure. The stalls these checks exist for
 * were seconds to minutes.
 */
export const stallBoundMs = (idleMs: number): number => 20 * Math.max(idleMs, 10);
