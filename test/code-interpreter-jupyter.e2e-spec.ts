import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KernelAPI, type KernelMessage, SessionAPI } from '@jupyterlab/services';
import OpenAI from 'openai';
import pg from 'pg';
import { DEFAULT_CODE_INTERPRETER_SETTINGS } from '#tools/code-interpreter/config/code-interpreter-settings.js';
import { clientSettings } from '#tools/code-interpreter/sandbox/kernel/jupyter-client-settings.js';
import { type JupyterEndpoint, JupyterHost, KERNEL_NAME } from '#tools/code-interpreter/sandbox/kernel/jupyter-host.js';
import { connected } from '#tools/code-interpreter/sandbox/kernel/jupyter-kernel.js';
import { QuietKernelConnection } from '#tools/code-interpreter/sandbox/kernel/quiet-kernel-connection.js';
import { startProcessPair, type ProcessPair } from './support/process/gateway-process.js';

const MODEL = 'switchyard-sim';
const TOOL = { type: 'code_interpreter' as const, container: { type: 'auto' as const } };
const OUTPUTS = ['code_interpreter_call.outputs' as const];
const SECRET = randomBytes(24).toString('hex');
const run = (code: string) => `[[call code_interpreter ${JSON.stringify({ code })}]]`;
const callOf = (r: OpenAI.Responses.Response) => r.output.find((i) => i.type === 'code_interpreter_call') as any;
const client = (baseURL: string) => new OpenAI({ baseURL, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000 });

/** Two replicas on one PostgreSQL schema of their own and one operator-run Jupyter Server (`kernel.jupyterUrl`, started here with the gateway's own kernelspec). */
interface SharedHost {
  endpoint: JupyterEndpoint;
  pair: ProcessPair;
  admin: pg.Pool;
  schema: string;
  close(): Promise<void>;
}

async function startSharedHost(codeInterpreter: Record<string, unknown> = {}): Promise<SharedHost> {
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `sy_jupyter_e2e_${randomBytes(4).toString('hex')}`;
  const root = mkdtempSync(join(tmpdir(), 'sy-jupyter-'));
  // nice 0: the suite's other workers would otherwise starve the kernels (the priority itself is measured in bench/).
  const host = new JupyterHost({ ...DEFAULT_CODE_INTERPRETER_SETTINGS, backend: 'kernel', nice: 0, sandbox: { ...DEFAULT_CODE_INTERPRETER_SETTINGS.sandbox, cpuWeight: 99 } });
  const endpoint = await host.endpoint();
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const pair = await startProcessPair({
    storage: { driver: 'postgres', postgresUrl: `${url}?options=-c%20search_path%3D${schema}` },
    codeInterpreter: {
      backend: 'kernel',
      nice: 0,
      sandbox: { cpuWeight: 99 },
      dataDir: join(root, 'containers'),
      timeoutMs: 30_000,
      kernel: { warm: 0, jupyterUrl: endpoint.url, jupyterToken: endpoint.token },
      internal: { secret: SECRET, leaseMs: 1_000 },
      ...codeInterpreter,
    },
  });
  return {
    endpoint,
    pair,
    admin,
    schema,
    async close() {
      await pair.close();
      await host.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * The kernel of a container lives on the Jupyter host, is spoken to with
 * real Jupyter messages, and is reached by the second replica once the first
 * is gone, its variables intact.
 */
describe('the kernel backend on a shared Jupyter Server, two replicas', () => {
  let shared: SharedHost;
  let endpoint: JupyterEndpoint;
  let pair: ProcessPair;
  let first: OpenAI.Responses.Response;
  let second: OpenAI.Responses.Response;

  beforeAll(async () => {
    shared = await startSharedHost();
    ({ endpoint, pair } = shared);
  }, 120_000);

  afterAll(async () => {
    await shared?.close();
  });

  it("a container's kernel is an ipykernel on the Jupyter host, answering Jupyter's kernel_info and execute requests", async () => {
    first = await client(pair.p.url).responses.create({ model: MODEL, input: `Start. ${run('n = 1\nn')}`, tools: [TOOL], include: OUTPUTS });
    const containerId = callOf(first).container_id as string;
    expect(callOf(first).outputs).toEqual([{ type: 'logs', logs: '1\n' }]);
    // The home published the kernel as a Jupyter session named by the container.
    const settings = clientSettings(endpoint, 1 << 20);
    const sessions = (await SessionAPI.listRunning(settings)).filter((s) => s.path === containerId);
    expect(sessions).toHaveLength(1);
    expect(sessions[0].kernel?.name).toBe(KERNEL_NAME);
    const kernel = new QuietKernelConnection({ model: sessions[0].kernel!, serverSettings: settings, handleComms: false });
    try {
      await connected(kernel);
      const info = (await kernel.requestKernelInfo())!.content as KernelMessage.IInfoReply;
      expect(info.protocol_version).toMatch(/^5\.\d+$/);
      expect(info.implementation).toBe('ipython');
      expect(info.language_info.name).toBe('python');
      // The container's variable, read with an execute_request of our own.
      const shown: string[] = [];
      const future = kernel.requestExecute({ code: 'n * 10', store_history: false });
      future.onIOPub = (msg) => {
        if (msg.header.msg_type === 'execute_result') shown.push((msg.content as KernelMessage.IExecuteResultMsg['content']).data['text/plain'] as string);
      };
      expect((await future.done).content.status).toBe('ok');
      expect(shown).toEqual(['10']);
    } finally {
      kernel.dispose();
    }
  }, 120_000);

  it('the other replica reaches the same kernel: forwarded to its home, then on its own through the Jupyter host once the home is gone', async () => {
    const b = client(pair.b.url);
    second = await b.responses.create({ model: MODEL, previous_response_id: first.id, input: `Next. ${run('n += 1\nn')}`, tools: [TOOL], include: OUTPUTS });
    expect(callOf(second)).toMatchObject({ container_id: callOf(first).container_id, outputs: [{ type: 'logs', logs: '2\n' }] });
    // The first replica, the container's home, dies: the second takes the container over and finds its kernel on the host.
    await pair.p.kill();
    const third = await b.responses.create({ model: MODEL, previous_response_id: second.id, input: `Again. ${run('n += 1\nn')}`, tools: [TOOL], include: OUTPUTS });
    expect(callOf(third)).toMatchObject({ container_id: callOf(first).container_id, outputs: [{ type: 'logs', logs: '3\n' }] });
    const read = JSON.parse((pair.b.simulator.requests.at(-1)!.body as any).input.at(-1).output);
    expect(read.status).toBe('ok');
    expect(read.note).toBeUndefined();
  }, 120_000);
});

describe('kernels a home left on the shared Jupyter Server when it died', () => {
  let shared: SharedHost;

  beforeAll(async () => {
    // Containers expire 12 s after their last call (room for both calls under load); the replicas sweep every 3 s.
    shared = await startSharedHost({ idleExpiryMs: 12_000 });
  }, 120_000);

  afterAll(async () => {
    await shared?.close();
  });

  it('are stopped by the surviving replica: one once its container expired, one once its record was gone', async () => {
    const { pair, endpoint, admin, schema } = shared;
    const p = client(pair.p.url);
    const expiring = callOf(await p.responses.create({ model: MODEL, input: `One. ${run('a = 1')}`, tools: [TOOL], include: OUTPUTS })).container_id as string;
    const unrecorded = callOf(await p.responses.create({ model: MODEL, input: `Two. ${run('b = 2')}`, tools: [TOOL], include: OUTPUTS })).container_id as string;
    const settings = clientSettings(endpoint, 1 << 20);
    const published = (await SessionAPI.listRunning(settings)).filter((s) => s.path === expiring || s.path === unrecorded);
    expect(published.map((s) => s.path).sort()).toEqual([expiring, unrecorded].sort());
    const kernels = published.map((s) => s.kernel!.id);
    // The home dies with both kernels on the host; one container's record goes behind the gateways' back (an operator's clean-up).
    await pair.p.kill();
    await admin.query(`DELETE FROM ${schema}.code_containers WHERE id = $1`, [unrecorded]);
    const running = async () => (await KernelAPI.listRunning(settings)).map((k) => k.id).filter((id) => kernels.includes(id));
    for (let i = 0; i < 600 && (await running()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await running()).toEqual([]);
    expect((await SessionAPI.listRunning(settings)).filter((s) => s.path === expiring || s.path === unrecorded)).toEqual([]);
  }, 120_000);
});
