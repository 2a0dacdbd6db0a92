import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

describe('state on the SQLite driver (a temporary database file)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-state-'));
  const storage = { driver: 'sqlite', sqlitePath: join(dir, 'nested', 'state.sqlite') };
  let stack: GatewayStack | undefined;

  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps responses and conversations across a gateway restart', async () => {
    stack = await startStack({ config: { storage } });
    const first = await stack.openai.responses.create({ model: 'm', input: 'Remember: kiwi. [[say Kiwi remembered.]]' });
    const conversation = await stack.openai.conversations.create({ items: [{ type: 'message', role: 'user', content: 'hello' }] });
    await stack.close();

    stack = await startStack({ config: { storage } });
    expect((await stack.openai.responses.retrieve(first.id)).output_text).toBe('Kiwi remembered.');
    const next = await stack.openai.responses.create({ model: 'm', previous_response_id: first.id, input: '[[say Still here.]]' });
    expect(next.output_text).toBe('Still here.');
    const upstream = (stack.simulator.requests.at(-1)!.body as any).input;
    expect(upstream.map((i: any) => i.role)).toEqual(['user', 'assistant', 'user']);
    expect((await stack.openai.conversations.items.list(conversation.id)).data).toHaveLength(1);
  });
});
