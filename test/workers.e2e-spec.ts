import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { workersAnswering } from './support/process/workers-answering.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** One request on a connection of its own, so the primary hands each to the next worker. */
function call(port: number, method: string, path: string, body?: unknown): Promise<{ status: number; worker: string | undefined; json: any }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port, method, path, agent: false, headers: data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {} },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, worker: res.headers['x-switchyard-worker'] as string | undefined, json: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    // A connection the primary handed to a worker that then died is never answered.
    req.setTimeout(3_000, () => req.destroy(new Error('no answer')));
    req.end(data);
  });
}

describe('worker mode: one command, two gateway processes on one port (SQLite shared)', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-workers-'));
  let simulator: SimulatedUpstream;
  let gateway: ChildProcess;
  let port: number;
  let stderr = '';

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    const { url } = await simulator.listen(0, '127.0.0.1');
    port = await freePort();
    gateway = spawn(process.execPath, ['--import', here('./support/process/ts-register.mjs'), here('../apps/gateway/src/main.ts')], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        WORKERS: '2',
        HOST: '127.0.0.1',
        PORT: String(port),
        UPSTREAM_URL: url,
        STORAGE_DRIVER: 'sqlite',
        SQLITE_PATH: join(root, 'state.sqlite'),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    gateway.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Both workers boot on their own (each compiles the sources): wait until each has answered.
    await workersAnswering(async () => {
      const health = await call(port, 'GET', '/health');
      return health.status === 200 ? String(health.json.worker) : null;
    }, 2);
  }, 90_000);

  afterAll(async () => {
    if (gateway.exitCode === null) {
      const exited = new Promise((r) => gateway.once('exit', r));
      gateway.kill('SIGTERM');
      await exited;
    }
    await simulator.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves from both workers, and a conversation continues across them', async () => {
    const workers = new Set<string>();
    for (let i = 0; i < 20 && workers.size < 2; i++) {
      const health = await call(port, 'GET', '/health');
      workers.add(String(health.json.worker));
      expect(health.worker).toBe(String(health.json.worker));
    }
    expect(workers.size).toBe(2);

    let previous: string | undefined;
    const servedBy = new Set<string>();
    for (let turn = 0; turn < 6; turn++) {
      const r = await call(port, 'POST', '/v1/responses', {
        model: 'm',
        input: `[[say turn ${turn}]]`,
        ...(previous ? { previous_response_id: previous } : {}),
      });
      expect(r.status).toBe(200);
      expect(r.json.output[0].content[0].text).toBe(`turn ${turn}`);
      servedBy.add(r.worker!);
      previous = r.json.id;
    }
    // Turns landed on both workers, and each found the previous turn, wherever it was stored.
    expect(servedBy.size).toBe(2);
    const last = simulator.requests.at(-1)!.body as any;
    expect(last.input.filter((i: any) => i.role === 'user')).toHaveLength(6);
    // Every stored response is readable from every worker.
    for (let i = 0; i < 4; i++) expect((await call(port, 'GET', `/v1/responses/${previous}`)).status).toBe(200);
  });

  it('replaces a worker that dies, and stops all of them on SIGTERM', async () => {
    const children = () => readFileSync(`/proc/${gateway.pid}/task/${gateway.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    const before = children();
    expect(before).toHaveLength(2);
    process.kill(before[0], 'SIGKILL');
    // A new worker (a new id) takes its place; the port never stopped answering.
    const seen = new Set<string>();
    for (let i = 0; i < 2_400 && !(seen.has('3') && seen.size >= 2); i++) {
      const health = await call(port, 'GET', '/health').catch(() => null);
      if (health?.status === 200) seen.add(String(health.json.worker));
      await new Promise((r) => setTimeout(r, 25));
    }
    expect({ seen: [...seen], stderr }).toMatchObject({ seen: expect.arrayContaining(['3']) });
    const after = children();
    expect(after).toHaveLength(2);
    expect(after).not.toContain(before[0]);

    const exited = new Promise<number | null>((r) => gateway.once('exit', (code) => r(code)));
    gateway.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const pid of after) expect(() => process.kill(pid, 0)).toThrow();
  }, 90_000);
});
