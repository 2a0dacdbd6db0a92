import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

async function apiError(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof OpenAI.APIError) return e;
    throw e;
  }
  throw new Error('expected the request to fail');
}

/** `containers.create` options through the official client: each honoured (and echoed) or refused with a 400 naming it. */
describe('containers.create options', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-container-options-'));
  let stack: GatewayStack;

  beforeAll(async () => {
    stack = await startStack({ config: { codeInterpreter: { backend: 'cpython', dataDir: join(root, 'containers'), timeoutMs: 60_000 } } });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('keeps memory_limit and echoes it on create, retrieve and list', async () => {
    const box = await stack.openai.containers.create({ name: 'big', memory_limit: '4g' });
    expect(box.memory_limit).toBe('4g');
    expect((await stack.openai.containers.retrieve(box.id)).memory_limit).toBe('4g');
    const listed = await stack.openai.containers.list();
    expect(listed.data.find((c) => c.id === box.id)?.memory_limit).toBe('4g');
    expect((await stack.openai.containers.create({ name: 'default' })).memory_limit).toBeNull();
  });

  it('refuses a memory_limit that is not one of the sizes, naming it', async () => {
    const e = await apiError(stack.openai.containers.create({ name: 'odd', memory_limit: '3g' as '4g' }));
    expect(e.status).toBe(400);
    expect((e.error as { param?: string }).param).toBe('memory_limit');
  });

  it('refuses a network_policy allowlist it cannot honour, and accepts "disabled"', async () => {
    const e = await apiError(
      stack.openai.containers.create({ name: 'net', network_policy: { type: 'allowlist', allowed_domains: ['pypi.org'] } } as Parameters<OpenAI['containers']['create']>[0]),
    );
    expect(e.status).toBe(400);
    expect((e.error as { param?: string }).param).toBe('network_policy');
    expect(e.message).toContain('allowlist');
    const off = await stack.openai.containers.create({ name: 'offline', network_policy: { type: 'disabled' } } as Parameters<OpenAI['containers']['create']>[0]);
    expect(off.object).toBe('container');
  });

  it('refuses a field it does not know, naming it', async () => {
    const e = await apiError(stack.openai.containers.create({ name: 'x', gpu: 'a100' } as unknown as Parameters<OpenAI['containers']['create']>[0]));
    expect(e.status).toBe(400);
    expect((e.error as { param?: string }).param).toBe('gpu');
  });
});
