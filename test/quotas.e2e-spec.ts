import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const MODEL = 'switchyard-sim';
const run = (code: string) => `[[call code_interpreter ${JSON.stringify({ code })}]]`;

async function error(p: Promise<unknown>) {
  try {
    await p;
    return { status: 200 };
  } catch (err) {
    const e = err as { status?: number; error?: { code?: string; message?: string; param?: string | null } };
    return { status: e.status, code: e.error?.code, message: e.error?.message, param: e.error?.param };
  }
}

/**
 * Per-owner quotas, counted where every worker sees the same numbers (the
 * container records and the file rows in the store): two gateways
 * sharing a data directory and a SQLite file stand for two workers.
 */
describe('per-owner quotas hold across gateway processes', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-quotas-'));
  const config = {
    auth: { apiKeys: ['sk-tenant-a', 'sk-tenant-b'] },
    storage: { driver: 'sqlite', sqlitePath: join(root, 'state.sqlite') },
    codeInterpreter: {
      backend: 'cpython',
      dataDir: join(root, 'containers'),
      timeoutMs: 60_000,
      maxContainersPerOwner: 3,
      maxBytesPerOwner: 300_000,
      maxContainerBytes: 1_000_000,
      // The two processes forward a container's operations to its home, as workers do.
      internal: { secret: 'quota-test-internal-secret' },
    },
    fileSearch: { maxFilesPerOwner: 3, maxBytesPerOwner: 5_000 },
  };
  let one: GatewayStack;
  let two: GatewayStack;
  const client = (stack: GatewayStack, key = 'sk-tenant-a') => new OpenAI({ baseURL: stack.url, apiKey: key, maxRetries: 0, timeout: 120_000 });

  beforeAll(async () => {
    one = await startStack({ config });
    two = await startStack({ config });
  });
  afterAll(async () => {
    await one.close();
    await two.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('containers: the fourth of one owner is a 403 quota_exceeded on either process; another owner is not affected', async () => {
    await client(one).containers.create({ name: 'c1' });
    await client(two).containers.create({ name: 'c2' });
    const third = await client(one).containers.create({ name: 'c3' });
    for (const stack of [one, two]) {
      expect(await error(client(stack).containers.create({ name: 'c4' }))).toMatchObject({
        status: 403,
        code: 'quota_exceeded',
        message: expect.stringContaining('maxContainersPerOwner'),
      });
    }
    expect((await client(one, 'sk-tenant-b').containers.create({ name: 'theirs' })).object).toBe('container');
    // A tool call that would need a new container says so too, naming the declaration.
    const res = await fetch(`${one.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-tenant-a' },
      body: JSON.stringify({ model: MODEL, input: 'hi', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }),
    });
    expect({ status: res.status, ...((await res.json()) as any).error }).toMatchObject({ status: 403, code: 'quota_exceeded', param: 'tools[0].container' });
    await client(one).containers.delete(third.id);
    expect((await client(two).containers.create({ name: 'again' })).object).toBe('container');
  });

  it('container bytes: uploads past the owner quota are refused, and a run writing past it fails without filling the disk', async () => {
    // Containers (and their records) live in the process that made them; the owner's bytes are counted across both.
    const [box] = (await client(one).containers.list()).data;
    const [other] = (await client(two).containers.list()).data;
    await client(one).containers.files.create(box.id, { file: await toFile(Buffer.alloc(200_000), 'a.bin') });
    expect(await error(client(two).containers.files.create(other.id, { file: await toFile(Buffer.alloc(200_000), 'b.bin') }))).toMatchObject({
      status: 403,
      code: 'quota_exceeded',
      param: 'file',
      message: expect.stringContaining('maxBytesPerOwner'),
    });
    const r = await client(one).responses.create({
      model: MODEL,
      input: `Fill it. ${run('try:\n    open("/mnt/data/big.bin", "wb").write(b"x" * 50_000_000)\nexcept OSError as e:\n    print("refused", e.errno)')}`,
      tools: [{ type: 'code_interpreter', container: box.id }],
      include: ['code_interpreter_call.outputs'],
    });
    const call = r.output[0] as any;
    expect(call.outputs[0].logs).toBe('refused 28\n');
    const modelSaw = JSON.parse((one.simulator.requests.at(-1)!.body as any).input.find((i: any) => i.type === 'function_call_output').output);
    expect(modelSaw.status).toBe('failed');
    const used = (await client(one).containers.files.list(box.id)).data.reduce((n, f) => n + f.bytes, 0);
    expect(used).toBeLessThanOrEqual(300_000);
  }, 120_000);

  it('Files API: files and bytes past the owner quota are a 403 quota_exceeded on either process', async () => {
    const upload = (stack: GatewayStack, bytes: number, key?: string) => client(stack, key).files.create({ file: new File([Buffer.alloc(bytes)], 'f.txt'), purpose: 'assistants' });
    await upload(one, 2_000);
    await upload(two, 2_000);
    expect(await error(upload(one, 2_000))).toMatchObject({ status: 403, code: 'quota_exceeded', message: expect.stringContaining('maxBytesPerOwner') });
    await upload(two, 10);
    expect(await error(upload(one, 10))).toMatchObject({ status: 403, code: 'quota_exceeded', message: expect.stringContaining('maxFilesPerOwner') });
    expect((await upload(two, 10, 'sk-tenant-b')).object).toBe('file');
  });
});
