import { OWNER_IDS, type OwnerIds } from '#config/owner-ids.js';
import OpenAI from 'openai';
import { STATE_STORE, type StateStore } from '#storage/index.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const KEY_A = 'sk-alpha-0123456789';
const KEY_B = 'sk-bravo-9876543210';

describe('inbound API keys and per-key isolation of stored state', () => {
  let stack: GatewayStack;
  let alice: OpenAI;
  let bob: OpenAI;

  beforeAll(async () => {
    stack = await startStack({ config: { auth: { apiKeys: [KEY_A, KEY_B] } } });
    alice = new OpenAI({ baseURL: stack.url, apiKey: KEY_A, maxRetries: 0 });
    bob = new OpenAI({ baseURL: stack.url, apiKey: KEY_B, maxRetries: 0 });
  });
  afterAll(() => stack.close());

  it('requires a valid bearer key on every route but the probes', async () => {
    const origin = stack.url.replace(/\/v1$/, '');
    for (const [method, path] of [
      ['POST', '/v1/responses'],
      ['GET', '/v1/models'],
      ['GET', '/v1/responses/resp_x'],
      ['POST', '/v1/conversations'],
      ['POST', '/v1/responses/compact'],
      ['POST', '/v1/responses/resp_x/cancel'],
      ['GET', '/v1/files'],
      ['GET', '/v1/vector_stores'],
      ['POST', '/v1/vector_stores/vs_x/search'],
      ['GET', '/v1/containers'],
    ]) {
      for (const headers of [{}, { authorization: 'Bearer wrong-key' }, { authorization: KEY_A }] as Array<Record<string, string>>) {
        const res = await fetch(`${origin}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: method === 'POST' ? '{}' : undefined });
        expect(res.status).toBe(401);
        expect(((await res.json()) as any).error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
      }
    }
    expect((await fetch(`${origin}/health`)).status).toBe(200);
    expect((await fetch(`${origin}/ready`)).status).toBe(200);
    await expect(stack.openai.models.list()).rejects.toMatchObject({ status: 401 });
    expect((await alice.models.list()).data.length).toBeGreaterThan(0);
  });

  it('keeps responses and conversations visible to their own key only', async () => {
    const mine = await alice.responses.create({ model: 'm', input: '[[say secret]]' });
    await expect(bob.responses.retrieve(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.responses.inputItems.list(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.responses.delete(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.responses.create({ model: 'm', input: 'x', previous_response_id: mine.id })).rejects.toMatchObject({
      status: 404,
      code: 'previous_response_not_found',
    });
    await expect(bob.responses.compact({ model: 'm', previous_response_id: mine.id })).rejects.toMatchObject({ status: 404 });
    expect((await alice.responses.retrieve(mine.id)).output_text).toBe('secret');
    const continued = await alice.responses.create({ model: 'm', input: '[[say more]]', previous_response_id: mine.id });
    expect(continued.previous_response_id).toBe(mine.id);

    const conversation = await alice.conversations.create({ items: [{ type: 'message', role: 'user', content: 'private' }] });
    await expect(bob.conversations.retrieve(conversation.id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.conversations.items.list(conversation.id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.responses.create({ model: 'm', input: 'x', conversation: conversation.id })).rejects.toMatchObject({
      status: 404,
      code: 'conversation_not_found',
    });
    await expect(bob.conversations.delete(conversation.id)).rejects.toMatchObject({ status: 404 });
    expect((await alice.conversations.retrieve(conversation.id)).id).toBe(conversation.id);
  });

  it('stores the owner as the keyed id of the key, never the key nor its plain hash', async () => {
    const response = await alice.responses.create({ model: 'm', input: '[[say hashed]]' });
    const store = stack.app.get<StateStore>(STATE_STORE);
    const owner = stack.app.get<OwnerIds>(OWNER_IDS).of(KEY_A);
    const stored = await store.getResponse(response.id, owner);
    expect(stored?.owner).toBe(owner);
    expect(JSON.stringify(stored)).not.toContain(KEY_A);
    expect(await store.getResponse(response.id, null)).toBeNull();
  });
});
