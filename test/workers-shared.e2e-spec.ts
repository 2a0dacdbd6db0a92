import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { until } from './support/until.js';

/**
 * Two workers behave as one gateway: the per-owner limits are counted by the
 * primary, and every scrape is the whole gateway's, whichever worker answers.
 */
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const KEY = 'sk-shared';
const BUDGETED = 'sk-shared-budget';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** One request on a connection of its own, so the primary hands each to the next worker. */
function call(
  port: number,
  method: string,
  path: string,
  body?: unknown,
  key: string | null = KEY,
  agent: Agent | false = false,
): Promise<{ status: number; worker: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {};
    if (key) headers.authorization = `Bearer ${key}`;
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, worker: res.headers['x-switchyard-worker'] as string | undefined, text }));
    });
    req.on('error', reject);
    req.setTimeout(20_000, () => req.destroy(new Error('no answer')));
    req.end(data);
  });
}

/** The value of one series in a Prometheus text exposition (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const braces = /\{([^}]*)\}/.exec(line)?.[1] ?? '';
    if (want.every((pair) => braces.split(',').includes(pair))) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

describe('worker mode shares limits and metrics across two workers', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-workers-shared-'));
  let simulator: SimulatedUpstream;
  let gateway: ChildProcess;
  let port: number;
  let metricsPort: number;
  let stdout = '';
  let stderr = '';

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    const { url } = await simulator.listen(0, '127.0.0.1');
    [port, metricsPort] = await Promise.all([freePort(), freePort()]);
    gateway = spawn(process.execPath, ['--import', here('./support/process/ts-register.mjs'), here('../apps/gateway/src/main.ts')], {
      env: {
        PATH: process.env.PATH ?? '',
        WORKERS: '2',
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        UPSTREAM_URL: url,
        API_KEYS: `${KEY},${BUDGETED}`,
        SWITCHYARD_DATA_DIR: join(root, 'data'),
        LIMIT_CONCURRENT_REQUESTS: '2',
        LIMIT_TOKENS_PER_DAY: '10000',
        REQUEST_LOG: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    gateway.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    gateway.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    for (let i = 0; i < 1_800 && !stdout.includes('"msg":"listening"'); i++) {
      if (gateway.exitCode !== null) throw new Error(`gateway exited: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 120_000);

  afterAll(async () => {
    if (gateway.exitCode === null && gateway.signalCode === null) {
      const exited = new Promise((r) => gateway.once('exit', r));
      gateway.kill('SIGTERM');
      await exited;
    }
    await simulator.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('prints one start-up summary, with the worker count, once both workers listen', () => {
    const lines = stdout.split('\n').filter(Boolean);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    const listening = lines.filter((l) => l.includes('"msg":"listening"'));
    expect(listening).toHaveLength(1);
    expect(JSON.parse(listening[0])).toMatchObject({ level: 'info', workers: 2 });
  });

  it('admits exactly the concurrency limit across workers: N+1 concurrent requests get one 429', async () => {
    simulator.requests.length = 0;
    // Three slow requests at once from one key (limit 2), each on its own connection: they land on both workers.
    const body = { model: 'm', input: '[[delay ttft=1500]] [[say slow]]' };
    const results = await Promise.all([0, 1, 2].map(() => call(port, 'POST', '/v1/responses', body)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 429]);
    expect(new Set(results.map((r) => r.worker)).size).toBe(2);
    const refused = JSON.parse(results.find((r) => r.status === 429)!.text);
    expect(refused.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(refused.error.message).toMatch(/2 concurrent requests/);
    // The places came back: the next two are admitted.
    const after = await Promise.all([0, 1].map(() => call(port, 'POST', '/v1/responses', { model: 'm', input: '[[say again]]' })));
    expect(after.map((r) => r.status)).toEqual([200, 200]);
  }, 60_000);

  it('reserves a request’s estimated cost for every worker: while one runs, the other worker cannot admit a second that would not fit', async () => {
    const big = (input: string) => ({ model: 'm', input, max_output_tokens: 6_000 });
    const reached = simulator.requests.length;
    const held = call(port, 'POST', '/v1/responses', big('[[delay ttft=1500]] [[say held]]'), BUDGETED);
    while (simulator.requests.length === reached) await new Promise((r) => setTimeout(r, 20));
    // Two more connections: at least one lands on the other worker; the primary refuses both.
    const refused = [await call(port, 'POST', '/v1/responses', big('x'), BUDGETED), await call(port, 'POST', '/v1/responses', big('x'), BUDGETED)];
    const first = await held;
    expect(first.status).toBe(200);
    expect(new Set([first.worker, ...refused.map((r) => r.worker)]).size).toBe(2);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(JSON.parse(r.text).error.message).toMatch(/tokens per day: Limit 10000, Used 6\d{3}, Requested 6\d{3}/);
    }
    // Settled to what it used (the worker tells the primary as the run ends, beside the answer): the same request fits again.
    let again = await call(port, 'POST', '/v1/responses', big('[[say fits]]'), BUDGETED);
    for (let i = 0; i < 100 && again.status === 429; i++) {
      await new Promise((r) => setTimeout(r, 50));
      again = await call(port, 'POST', '/v1/responses', big('[[say fits]]'), BUDGETED);
    }
    expect(again.status).toBe(200);
  }, 60_000);

  it('answers every scrape with the totals of both workers, whichever worker answers', async () => {
    const scrape = async () => {
      const r = await call(port, 'GET', '/metrics');
      expect(r.status).toBe(200);
      return r;
    };
    const base = sample((await scrape()).text, 'switchyard_http_requests_total', { route: '/v1/responses', status: '200' });
    const served = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const r = await call(port, 'POST', '/v1/responses', { model: 'm', input: `[[say n${i}]]` });
      expect(r.status).toBe(200);
      served.add(r.worker!);
    }
    expect(served.size).toBe(2);
    const answeredBy = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const r = await scrape();
      answeredBy.add(r.worker!);
      expect(sample(r.text, 'switchyard_http_requests_total', { route: '/v1/responses', status: '200' })).toBe(base + 6);
      expect(sample(r.text, 'switchyard_worker_up', {})).toBe(2);
    }
    expect(answeredBy.size).toBe(2);
  }, 60_000);

  it('counts every run in GET /v1/usage once, whichever worker ran it and whichever worker answers the read', async () => {
    // A model name of its own, so that the other tests' runs are not in the row.
    const model = 'usage-across-workers';
    const ran: Array<{ worker: string; input: number; output: number }> = [];
    for (let i = 0; i < 10; i++) {
      const r = await call(port, 'POST', '/v1/responses', { model, input: `[[say counted ${i}]]` });
      expect(r.status).toBe(200);
      const { usage } = JSON.parse(r.text) as { usage: { input_tokens: number; output_tokens: number } };
      ran.push({ worker: r.worker!, input: usage.input_tokens, output: usage.output_tokens });
    }
    expect(new Set(ran.map((r) => r.worker)).size).toBe(2);
    const want = {
      num_model_requests: 10,
      input_tokens: ran.reduce((n, r) => n + r.input, 0),
      output_tokens: ran.reduce((n, r) => n + r.output, 0),
    };
    const row = async (agent: Agent | false = false) => {
      const r = await call(port, 'GET', '/v1/usage?group_by=model', undefined, KEY, agent);
      expect(r.status).toBe(200);
      const page = JSON.parse(r.text) as { data: Array<{ results: Array<Record<string, unknown>> }> };
      return { worker: r.worker, row: page.data.at(-1)!.results.find((x) => x.model === model) };
    };
    // Reads on one kept-alive connection all reach one worker. A read writes what its own worker has
    // pending first; the other worker's runs reach the totals only by its own window's write
    // (usage-batch.ts), which these reads wait for. Then the totals never move again.
    const oneConnection = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const seen = await until(
        () => row(oneConnection),
        (r) => r.row?.num_model_requests === 10,
        'the other worker writing its runs',
      );
      expect(seen.row).toMatchObject(want);
    } finally {
      oneConnection.destroy();
    }
    const readBy = new Set<string | undefined>();
    for (let i = 0; i < 6; i++) {
      const r = await row();
      readBy.add(r.worker);
      expect(r.row).toMatchObject(want);
    }
    expect(readBy.size).toBe(2);
  }, 60_000);

  it('serves the merged metrics on the metrics port without a key, while the main port asks for one', async () => {
    expect((await call(port, 'GET', '/metrics', undefined, null)).status).toBe(401);
    const main = sample((await call(port, 'GET', '/metrics')).text, 'switchyard_http_requests_total', { route: '/v1/responses', status: '200' });
    const open = await call(metricsPort, 'GET', '/metrics', undefined, null);
    expect(open.status).toBe(200);
    expect(sample(open.text, 'switchyard_http_requests_total', { route: '/v1/responses', status: '200' })).toBe(main);
    expect(sample(open.text, 'switchyard_worker_up', {})).toBe(2);
  }, 30_000);

  it('keeps answering scrapes while a worker that died is replaced (only ready workers are asked)', async () => {
    const children = () => readFileSync(`/proc/${gateway.pid}/task/${gateway.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    const [victim] = children();
    process.kill(victim, 'SIGKILL');
    const statuses: number[] = [];
    let up = 0;
    for (let i = 0; i < 400 && up !== 2; i++) {
      const r = await call(metricsPort, 'GET', '/metrics', undefined, null);
      statuses.push(r.status);
      up = sample(r.text, 'switchyard_worker_up', {});
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(up).toBe(2);
    expect(children()).not.toContain(victim);
    // A scrape during the replacement may fail once (the worker that died was asked); none stalls or keeps failing.
    expect(statuses.filter((s) => s !== 200).length).toBeLessThanOrEqual(1);
  }, 60_000);
});
