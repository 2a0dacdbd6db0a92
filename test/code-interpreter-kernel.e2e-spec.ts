import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import type { GatewayStack } from './support/gateway-harness.js';
import { startInterpreterStack, type InterpreterStack } from './support/code-interpreter/interpreter-stack.js';
import { spawnGateway, type GatewayProcess } from './support/process/gateway-process.js';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { workersAnswering } from './support/process/workers-answering.js';

const validator = new OpenResponsesValidator();
const MODEL = 'switchyard-sim';
const TOOL = { type: 'code_interpreter' as const, container: { type: 'auto' as const } };
const OUTPUTS = ['code_interpreter_call.outputs' as const];
const run = (code: string) => `[[call code_interpreter ${JSON.stringify({ code })}]]`;
const callOf = (r: OpenAI.Responses.Response) => r.output.find((i) => i.type === 'code_interpreter_call') as any;

describe('code_interpreter on the kernel backend over the openai client', () => {
  let running: InterpreterStack;
  let stack: GatewayStack;
  let client: OpenAI;
  /** What the model read back from the latest call (the simulated upstream's last request). */
  const modelRead = () => JSON.parse((stack.simulator.requests.at(-1)!.body as any).input.at(-1).output);

  beforeAll(async () => {
    // One live kernel, so a second conversation evicts the first's; the data stack is preloaded, so 4 s is ample for these programs.
    // nice 0: the suite's other workers would otherwise starve the kernels (the priority itself is measured in bench/).
    running = await startInterpreterStack('switchyard-kernel-e2e-', {
      backend: 'kernel',
      nice: 0,
      sandbox: { cpuWeight: 99 },
      timeoutMs: 4_000,
      graceMs: 1_000,
      kernel: { maxLive: 1, warm: 1 },
    });
    ({ stack, client } = running);
  }, 120_000);
  afterAll(() => running.close());

  it('groups a CSV given as a Files API id with pandas, and the variable is there on the next turn (auto, previous_response_id)', async () => {
    const csv = await client.files.create({ file: await toFile(Buffer.from('city,sales\nParis,3\nLyon,4\nParis,5\n'), 'sales.csv'), purpose: 'assistants' });
    const code = "import pandas as pd\ndf = pd.read_csv('/mnt/data/sales.csv')\ntotals = df.groupby('city').sales.sum()\nprint(totals.to_dict())";
    const first = await client.responses.create({
      model: MODEL,
      input: `Sum. ${run(code)}`,
      tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: [csv.id] } }],
      include: OUTPUTS,
    });
    validator.assertResponse(first);
    const call = callOf(first);
    expect(call).toMatchObject({ status: 'completed', outputs: [{ type: 'logs', logs: "{'Lyon': 4, 'Paris': 8}\n" }] });
    // The model was told what this sandbox has.
    const declared = (stack.simulator.requests.at(-1)!.body as any).tools[0].description as string;
    expect(declared).toContain('Variables, imports and open figures persist between calls');
    expect(declared).toContain('numpy, pandas, matplotlib, scipy');

    const next = await client.responses.create({ model: MODEL, previous_response_id: first.id, input: `Again. ${run('totals.max(), len(df)')}`, tools: [TOOL], include: OUTPUTS });
    expect(callOf(next)).toMatchObject({ container_id: call.container_id, status: 'completed', outputs: [{ type: 'logs', logs: '(8, 3)\n' }] });
    expect(modelRead().note).toBeUndefined();
  }, 60_000);

  it('returns a chart once (saved and left open), downloadable with containers.files.content and cited in the answer', async () => {
    const code = "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.bar(['a', 'b'], [3, 5])\nfig.savefig('/mnt/data/chart.png')\nprint('saved')";
    const r = await client.responses.create({ model: MODEL, input: `Chart. ${run(code)}`, tools: [TOOL], include: OUTPUTS });
    const call = callOf(r);
    expect(call.outputs.map((o: any) => o.type)).toEqual(['logs', 'image']);
    const files = (await client.containers.files.list(call.container_id)).data;
    expect(files.map((f) => f.path)).toEqual(['/mnt/data/chart.png']);
    const png = Buffer.from(await (await client.containers.files.content.retrieve(files[0].id, { container_id: call.container_id })).arrayBuffer());
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(Buffer.from(call.outputs[1].url.split(',')[1], 'base64')).toEqual(png);
    const part = (r.output.find((i) => i.type === 'message') as any).content[0];
    const cited = part.annotations.filter((a: any) => a.type === 'container_file_citation');
    expect(cited).toContainEqual(expect.objectContaining({ container_id: call.container_id, file_id: files[0].id, filename: 'chart.png' }));
    // The figure stays open in the session, and is not shown again while unchanged.
    const again = await client.responses.create({ model: MODEL, previous_response_id: r.id, input: `Count. ${run('len(plt.get_fignums())')}`, tools: [TOOL], include: OUTPUTS });
    expect(callOf(again).outputs).toEqual([{ type: 'logs', logs: '1\n' }]);
  }, 60_000);

  it('a conversation whose kernel was evicted (kernel.maxLive) is told on its next call that the session was reset, and which files remain', async () => {
    const a = await client.responses.create({ model: MODEL, input: `Set. ${run("kept = 7\nopen('/mnt/data/a.txt', 'w').write('a')")}`, tools: [TOOL] });
    await client.responses.create({ model: MODEL, input: `Other. ${run('other = 1')}`, tools: [TOOL] });
    const back = await client.responses.create({ model: MODEL, previous_response_id: a.id, input: `Read. ${run("print('kept' in globals())")}`, tools: [TOOL], include: OUTPUTS });
    expect(callOf(back)).toMatchObject({ container_id: callOf(a).container_id, outputs: [{ type: 'logs', logs: 'False\n' }] });
    expect(modelRead().note).toBe(
      'The Python session of this container was reset (it was the least recently used of the live sessions when the gateway needed room for another): ' +
        'variables, imports and open figures are gone. Files still in /mnt/data: /mnt/data/a.txt.',
    );
  }, 60_000);

  it('stops a run at the time limit with its logs, and the session starts over', async () => {
    const first = await client.responses.create({ model: MODEL, input: `Spin. ${run("v = 1\nprint('spinning', flush=True)\nwhile True: pass")}`, tools: [TOOL], include: OUTPUTS });
    const call = callOf(first);
    expect(call.status).toBe('failed');
    expect(call.outputs[0].type).toBe('logs');
    expect(call.outputs[0].logs).toMatch(/^spinning\n[\s\S]*KeyboardInterrupt/);
    const read = modelRead();
    expect(read.status).toBe('failed');
    expect(read.note).toContain('The code was stopped after 4000 ms (the time limit).');
    expect(read.note).toContain('The Python session of this container was reset because of this');
    const next = await client.responses.create({
      model: MODEL,
      previous_response_id: first.id,
      input: `Again. ${run("print('v' in globals())")}`,
      tools: [TOOL],
      include: OUTPUTS,
    });
    expect(callOf(next)).toMatchObject({ container_id: call.container_id, status: 'completed', outputs: [{ type: 'logs', logs: 'False\n' }] });
  }, 60_000);
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('the kernel backend with two workers on one port (SQLite shared)', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-kernel-workers-'));
  let simulator: SimulatedUpstream;
  let gateway: GatewayProcess;
  let baseURL: string;

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    const { url } = await simulator.listen(0, '127.0.0.1');
    const port = await freePort();
    const config = join(root, 'gateway.json');
    writeFileSync(
      config,
      JSON.stringify({ codeInterpreter: { backend: 'kernel', nice: 0, sandbox: { cpuWeight: 99 }, dataDir: join(root, 'containers'), timeoutMs: 30_000, kernel: { warm: 0 } } }),
    );
    gateway = spawnGateway({ WORKERS: '2', HOST: '127.0.0.1', PORT: String(port), UPSTREAM_URL: url, STORAGE_DRIVER: 'sqlite', SQLITE_PATH: join(root, 'state.sqlite') }, [
      '--config',
      config,
    ]);
    baseURL = `http://127.0.0.1:${port}/v1`;
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

  it('turns served by either worker reach the one kernel on the container home: the variable counts every turn', async () => {
    // `connection: close` makes the primary hand each request to the next worker.
    const c = new OpenAI({ baseURL, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000, defaultHeaders: { connection: 'close' } });
    const workers = new Set<string>();
    const { data: first, response } = await c.responses.create({ model: MODEL, input: `Start. ${run('n = 1\nn')}`, tools: [TOOL], include: OUTPUTS }).withResponse();
    workers.add(String(response.headers.get('x-switchyard-worker')));
    expect(callOf(first).outputs).toEqual([{ type: 'logs', logs: '1\n' }]);
    let previous = first.id;
    for (let turn = 2; turn <= 4; turn++) {
      const { data: next, response: res } = await c.responses
        .create({ model: MODEL, previous_response_id: previous, input: `Next. ${run('n += 1\nn')}`, tools: [TOOL], include: OUTPUTS })
        .withResponse();
      workers.add(String(res.headers.get('x-switchyard-worker')));
      expect(callOf(next)).toMatchObject({ container_id: callOf(first).container_id, outputs: [{ type: 'logs', logs: `${turn}\n` }] });
      previous = next.id;
    }
    expect(workers.size).toBe(2);
    expect(gateway.stderr()).not.toMatch(/forwarded container operation failed/);
  }, 120_000);
});
