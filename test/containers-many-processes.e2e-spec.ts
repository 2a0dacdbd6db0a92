import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import pg from 'pg';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { WRITE_CSV } from './support/code-interpreter/python-snippets.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { spawnGateway, startProcessPair, type GatewayProcess, type ProcessPair } from './support/process/gateway-process.js';
import { workersAnswering } from './support/process/workers-answering.js';

const MODEL = 'switchyard-sim';
const TOOL = { type: 'code_interpreter' as const, container: { type: 'auto' as const } };
const OUTPUTS = ['code_interpreter_call.outputs' as const];
const run = (code: string) => `[[call code_interpreter ${JSON.stringify({ code })}]]`;
const CSV = 'n,square\r\n1,1\r\n2,4\r\n3,9\r\n4,16\r\n5,25\r\n';
/** Every process shares the credential (replicas are given it; the primary makes one for its workers). */
const SECRET = randomBytes(24).toString('hex');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A client per connection: `connection: close` makes the primary hand each request to the next worker. */
const client = (baseURL: string) => new OpenAI({ baseURL, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000, defaultHeaders: { connection: 'close' } });

/** Who answered: the worker header in worker mode, else the client's own name. */
type Served = (headers: Headers, client: number) => string;

/**
 * What one gateway must do whichever process serves each request: a file a
 * run wrote downloads on every request, `auto` through previous_response_id
 * reuses the container, list/retrieve give one answer, a delete is seen
 * everywhere. `clients[i % n]` serves the i-th request.
 */
async function oneGateway(clients: OpenAI[], served: Served): Promise<void> {
  const by = (i: number) => clients[i % clients.length];
  const who = new Set<string>();
  const first = await by(0).responses.create({ model: MODEL, input: `Make a table. ${run(WRITE_CSV)}`, tools: [TOOL], include: OUTPUTS });
  const containerId = (first.output[0] as any).container_id as string;
  expect(containerId).toMatch(/^cntr_[0-9a-f]{32}$/);
  const listed = await by(1).containers.files.list(containerId);
  expect(listed.data.map((f) => f.path)).toEqual(['/mnt/data/squares.csv']);
  const fileId = listed.data[0].id;

  for (let i = 0; i < 6; i++) {
    const { data, response } = await by(i).containers.files.content.retrieve(fileId, { container_id: containerId }).withResponse();
    expect(await data.text()).toBe(CSV);
    who.add(served(response.headers, i % clients.length));
  }
  expect(who.size).toBe(2);

  const answers = await Promise.all([0, 1, 2, 3].map(async (i) => JSON.stringify([await by(i).containers.retrieve(containerId), (await by(i).containers.list()).data])));
  expect(new Set(answers).size).toBe(1);

  // Turns of one conversation land on every process and find the container each time.
  who.clear();
  let previous = first.id;
  for (let turn = 1; turn <= 4; turn++) {
    const code = `open('/mnt/data/turn${turn}.txt', 'w').write('x')\nimport os\nprint(len(open('/mnt/data/squares.csv').read().splitlines()), sorted(os.listdir('/mnt/data')))`;
    const { data: next, response } = await by(turn)
      .responses.create({ model: MODEL, previous_response_id: previous, input: `Again. ${run(code)}`, tools: [TOOL], include: OUTPUTS })
      .withResponse();
    who.add(served(response.headers, turn % clients.length));
    const call = next.output.find((i) => i.type === 'code_interpreter_call') as any;
    expect(call.container_id).toBe(containerId);
    const names = ['squares.csv', ...Array.from({ length: turn }, (_, i) => `turn${i + 1}.txt`)].sort();
    expect(call.outputs).toEqual([{ type: 'logs', logs: `6 ${JSON.stringify(names).replaceAll('"', "'").replaceAll(',', ', ')}\n` }]);
    previous = next.id;
  }
  expect(who.size).toBe(2);
  expect((await by(0).containers.files.list(containerId)).data).toHaveLength(5);

  await by(1).containers.delete(containerId);
  for (let i = 0; i < 4; i++) {
    const gone = await by(i)
      .containers.retrieve(containerId)
      .catch((e) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await by(i).containers.list()).data.map((c) => c.id)).not.toContain(containerId);
  }
}

describe('containers with two workers on one port (SQLite shared)', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-cntr-workers-'));
  let simulator: SimulatedUpstream;
  let gateway: GatewayProcess;
  let baseURL: string;

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    const { url } = await simulator.listen(0, '127.0.0.1');
    const port = await freePort();
    const config = join(root, 'gateway.json');
    writeFileSync(config, JSON.stringify({ codeInterpreter: { backend: 'cpython', dataDir: join(root, 'containers'), timeoutMs: 60_000 } }));
    gateway = spawnGateway({ WORKERS: '2', HOST: '127.0.0.1', PORT: String(port), UPSTREAM_URL: url, STORAGE_DRIVER: 'sqlite', SQLITE_PATH: join(root, 'state.sqlite') }, [
      '--config',
      config,
    ]);
    baseURL = `http://127.0.0.1:${port}/v1`;
    // Both workers boot on their own: wait until each has answered.
    const up = await workersAnswering(async () => {
      const health = await fetch(`http://127.0.0.1:${port}/health`, { headers: { connection: 'close' } });
      return health.status === 200 ? String(health.headers.get('x-switchyard-worker')) : null;
    }, 2);
    expect(up.size).toBe(2);
  }, 120_000);

  afterAll(async () => {
    if (gateway.child.exitCode === null) {
      gateway.child.kill('SIGTERM');
      await gateway.exited;
    }
    await simulator.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('is one gateway: downloads, auto reuse through previous_response_id, list/retrieve/delete, whichever worker answers', async () => {
    const c = client(baseURL);
    await oneGateway([c], (headers) => String(headers.get('x-switchyard-worker')));
    expect(gateway.stderr()).not.toMatch(/forwarded container operation failed/);
  }, 180_000);
});

describe('containers on two replicas (PostgreSQL shared)', () => {
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `sy_cntr_e2e_${randomBytes(4).toString('hex')}`;
  const root = mkdtempSync(join(tmpdir(), 'sy-cntr-replicas-'));
  let admin: pg.Pool;
  let pair: ProcessPair;

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: url, max: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
    pair = await startProcessPair({
      storage: { driver: 'postgres', postgresUrl: `${url}?options=-c%20search_path%3D${schema}` },
      // One host here, so one data directory: a taken-over container keeps its files.
      codeInterpreter: { backend: 'cpython', dataDir: join(root, 'containers'), timeoutMs: 60_000, internal: { secret: SECRET, leaseMs: 1_000 } },
    });
  }, 120_000);

  afterAll(async () => {
    await pair?.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    rmSync(root, { recursive: true, force: true });
  });

  it('is one gateway: downloads, auto reuse through previous_response_id, list/retrieve/delete, whichever replica answers', async () => {
    await oneGateway([client(pair.p.url), client(pair.b.url)], (_headers, i) => ['p', 'b'][i]);
  }, 180_000);

  it('a killed home: the next call takes the container over and tells the model the session was reset and which files remain', async () => {
    const p = client(pair.p.url);
    const b = client(pair.b.url);
    const first = await p.responses.create({ model: MODEL, input: `Make a table. ${run(WRITE_CSV)}`, tools: [TOOL], include: OUTPUTS });
    const containerId = (first.output[0] as any).container_id as string;
    await pair.p.kill();
    const next = await b.responses.create({
      model: MODEL,
      previous_response_id: first.id,
      input: `Again. ${run("import os\nprint(sorted(os.listdir('/mnt/data')))")}`,
      tools: [TOOL],
      include: OUTPUTS,
    });
    const call = next.output.find((i) => i.type === 'code_interpreter_call') as any;
    expect(call.container_id).toBe(containerId);
    expect(call.outputs).toEqual([{ type: 'logs', logs: "['squares.csv']\n" }]);
    // The model read the notice with the tool result (B has its own simulated upstream).
    const upstream = pair.b.simulator.requests.at(-1)!.body as any;
    const output = JSON.parse(upstream.input.at(-1).output);
    expect(output.note).toMatch(/session of this container was reset/);
    expect(output.note).toContain('Files still in /mnt/data: /mnt/data/squares.csv.');
    // Told once: the run after that has no notice.
    const third = await b.responses.create({ model: MODEL, previous_response_id: next.id, input: `Once more. ${run('print(1)')}`, tools: [TOOL] });
    expect((third.output[0] as any).container_id).toBe(containerId);
    expect(JSON.parse((pair.b.simulator.requests.at(-1)!.body as any).input.at(-1).output).note).toBeUndefined();
    const files = await b.containers.files.list(containerId);
    expect(await (await b.containers.files.content.retrieve(files.data[0].id, { container_id: containerId })).text()).toBe(CSV);
  }, 180_000);
});

describe('Files API ids in code_interpreter file_ids and containers.files.create', () => {
  let stack: GatewayStack;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sy-cntr-fileids-'));
    stack = await startStack({ config: { codeInterpreter: { backend: 'cpython', dataDir, timeoutMs: 60_000 } } });
  });
  afterAll(async () => {
    await stack.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('copies a file-... id into /mnt/data under its name, from the declaration and from containers.files.create', async () => {
    const c = client(stack.url);
    const csv = await c.files.create({ file: await toFile(Buffer.from('city,sales\nParis,3\nLyon,4\nParis,5\n'), 'sales.csv'), purpose: 'assistants' });
    expect(csv.id).toMatch(/^file-/);
    const code = "import pandas as pd\nprint(pd.read_csv('/mnt/data/sales.csv').groupby('city').sales.sum().to_dict())";
    const r = await c.responses.create({
      model: MODEL,
      input: `Sum. ${run(code)}`,
      tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: [csv.id] } }],
      include: OUTPUTS,
    });
    const call = r.output[0] as any;
    expect(call.outputs).toEqual([{ type: 'logs', logs: "{'Lyon': 4, 'Paris': 8}\n" }]);
    const listed = await c.containers.files.list(call.container_id);
    expect(listed.data.map((f) => [f.path, f.source])).toEqual([['/mnt/data/sales.csv', 'user']]);

    const notes = await c.files.create({ file: await toFile(Buffer.from('remember'), 'notes.txt'), purpose: 'assistants' });
    const box = await c.containers.create({ name: 'with a file' });
    const added = await c.containers.files.create(box.id, { file_id: notes.id });
    expect(added).toMatchObject({ path: '/mnt/data/notes.txt', bytes: 8, container_id: box.id });
    expect(await (await c.containers.files.content.retrieve(added.id, { container_id: box.id })).text()).toBe('remember');

    // An unknown id is a 404 naming the field.
    const missing = await c.responses
      .create({ model: MODEL, input: 'x', tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: ['file-doesnotexist'] } }] })
      .catch((e) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing.error.param).toBe('tools[0].container.file_ids[0]');
  }, 120_000);
});
