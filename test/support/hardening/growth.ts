import http from 'node:http';
import { rawPost, type RawResponse } from '../robustness/raw-http.js';

/** Wall time of `work`, in milliseconds, from `process.hrtime` (for ratios only, never compared to a constant). */
export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await work();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

/** The median of `runs` timings of `work`, after one warm-up run. */
export async function medianMs(work: () => Promise<unknown>, runs = 3): Promise<number> {
  await work();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push((await timed(work)).ms);
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

/**
 * Sends `body` and, once its bytes are out, asks `/health` on a separate
 * connection: resolves with the big answer and how long `/health` took.
 */
export async function withHealthProbe(
  base: string,
  url: string,
  body: string,
  headers?: Record<string, string>,
): Promise<{ res: RawResponse; healthMs: number; healthStatus: number }> {
  const big = rawPost(url, body, { headers, timeoutMs: 120_000 });
  // Let the large body reach the server before probing.
  await new Promise((r) => setTimeout(r, 5));
  const probe = timed(() => get(`${base}/health`));
  const [res, health] = await Promise.all([big, probe]);
  return { res, healthMs: health.ms, healthStatus: health.value.status };
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
