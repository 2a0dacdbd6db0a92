import http from 'node:http';
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
