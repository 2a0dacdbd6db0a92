import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { workersAnswering } from './support/process/workers-answering.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const KEY = 'sk-prom-usage-31';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/**
 * The acceptance run: a real Prometheus (the Debian package) scrapes a
 * gateway of two workers through its metrics port; the token totals it
 * stores equal the sum of the `usage` the `openai` clients received, whichever
 * worker served each request.
 */
describe('token metrics scraped by a real Prometheus from a gateway of two workers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-prom-'));
  let simulator: SimulatedUpstream;
  let gateway: ChildProcess;
  let prometheus: ChildProcess;
  let port: number;
  let promPort: number;
  let stderr = '';

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    const { url } = await simulator.listen(0, '127.0.0.1');
    [port, promPort] = [await freePort(), await freePort()];
    const metricsPort = await freePort();
    gateway = spawn(process.execPath, ['--import', here('./support/process/ts-register.mjs'), here('../apps/gateway/src/main.ts')], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        WORKERS: '2',
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        UPSTREAM_URL: url,
        API_KEYS: KEY,
        REQUEST_LOG: 'false',
        STORAGE_DRIVER: 'sqlite',
        SQLITE_PATH: join(dir, 'state.sqlite'),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    gateway.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  scrape_timeout: 900ms',
        'scrape_configs:',
        '  - job_name: switchyard',
        '    static_configs:',
        `      - targets: ['127.0.0.1:${metricsPort}']`,
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      'prometheus',
      [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${promPort}`, '--log.level=warn'],
      { stdio: 'ignore' },
    );
    // Both workers boot on their own: wait until each has answered a fresh connection.
    const up = await workersAnswering(async () => {
      const health = await fetch(`http://127.0.0.1:${port}/health`, { headers: { connection: 'close' } });
      return health.status === 200 ? String(((await health.json()) as { worker: number }).worker) : null;
    }, 2);
    expect(up.size).toBe(2);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([stop(gateway), stop(prometheus)]);
    await simulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One instant query's scalar value (NaN when the series is absent). */
  async function query(expr: string): Promise<number> {
    const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(expr)}`).catch(() => null);
    const body = (await res?.json().catch(() => null)) as { data?: { result?: Array<{ value: [number, string] }> } } | null;
    return Number(body?.data?.result?.[0]?.value?.[1] ?? NaN);
  }

  it('stores totals equal to the clients’ usage, summed over both workers', async () => {
    // A connection per request: the primary hands each to the next worker.
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: KEY, maxRetries: 0, defaultHeaders: { connection: 'close' } });
    const workers = new Set<string>();
    let input = 0;
    let output = 0;
    for (let i = 0; i < 6; i++) {
      const { data, response } = await client.responses.create({ model: i % 2 ? 'm' : 'n', input: `Request ${i}: say something. [[tokens ${5 + i}]]` }).withResponse();
      workers.add(String(response.headers.get('x-switchyard-worker')));
      input += data.usage!.input_tokens;
      output += data.usage!.output_tokens;
    }
    const stream = await client.responses.create({ model: 'm', input: 'Stream it.', stream: true });
    for await (const event of stream) {
      if (event.type !== 'response.completed') continue;
      input += event.response.usage!.input_tokens;
      output += event.response.usage!.output_tokens;
    }
    expect(workers.size).toBe(2);
    expect(input).toBeGreaterThan(0);

    const expected = { in: input, out: output, requests: 7 };
    let seen = { in: NaN, out: NaN, requests: NaN, workers: NaN };
    for (let i = 0; i < 150; i++) {
      seen = {
        in: await query('sum(switchyard_tokens_total{kind="input"})'),
        out: await query('sum(switchyard_tokens_total{kind="output"})'),
        requests: await query('sum(switchyard_tokens_per_request_count{kind="output"})'),
        workers: await query('count(switchyard_worker_up == 1)'),
      };
      if (seen.in === expected.in && seen.out === expected.out && seen.requests === expected.requests && seen.workers === 2) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(seen).toEqual({ ...expected, workers: 2 });
    // Both models are series of their own, and they add up to the total.
    expect((await query('sum(switchyard_tokens_total{kind="input",model="m"})')) + (await query('sum(switchyard_tokens_total{kind="input",model="n"})'))).toBe(input);
    expect(stderr).not.toMatch(/Error/);
  }, 60_000);
});
