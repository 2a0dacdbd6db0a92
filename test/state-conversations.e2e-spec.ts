import type OpenAI from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { weatherTool } from './support/fixtures.js';

function lastUpstreamInput(stack: GatewayStack): any[] {
  return (stack.simulator.requests.at(-1)!.body as any).input;
}

function textOf(item: any): string {
  if (item.type === 'function_call_output') return `output:${item.output}`;
  if (item.type === 'function_call') return `call:${item.name}`;
  return `${item.role}:${typeof item.content === 'string' ? item.content : item.content.map((p: any) => p.text).join('')}`;
}

describe('the Conversations API and responses in a conversation (openai client)', () => {
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startStack();
    client = stack.openai;
  });
  afterAll(() => stack.close());

  it('creates, reads, updates and deletes a conversation', async () => {
    const conversation = await client.conversations.create({ metadata: { topic: 'demo' } });
    expect(conversation).toEqual({ id: expect.stringMatching(/^conv_/), object: 'conversation', created_at: expect.any(Number), metadata: { topic: 'demo' } });
    expect(await client.conversations.retrieve(conversation.id)).toEqual(conversation);
    const updated = await client.conversations.update(conversation.id, { metadata: { topic: 'changed', extra: 'x' } });
    expect(updated.metadata).toEqual({ topic: 'changed', extra: 'x' });
    const deleted = await client.conversations.delete(conversation.id);
    expect(deleted).toEqual({ id: conversation.id, object: 'conversation.deleted', deleted: true });
    await expect(client.conversations.retrieve(conversation.id)).rejects.toMatchObject({ status: 404 });
  });

  it('manages items: add, list with pagination, retrieve, delete', async () => {
    const conversation = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'first' }] });
    const added = await client.conversations.items.create(conversation.id, {
      items: [{ type: 'message', role: 'user', content: 'second' }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'third' }] } as any],
    });
    expect(added.data).toHaveLength(2);
    expect(added).toMatchObject({ object: 'list', has_more: false, first_id: added.data[0].id });

    const asc = await client.conversations.items.list(conversation.id, { order: 'asc' });
    expect(asc.data.map(textOf)).toEqual(['user:first', 'user:second', 'assistant:third']);
    const newest = await client.conversations.items.list(conversation.id, { limit: 1 });
    expect(newest.data.map(textOf)).toEqual(['assistant:third']);
    expect(newest.has_more).toBe(true);
    // The SDK's auto-pagination follows `after` with the last id.
    const everything: any[] = [];
    for await (const item of client.conversations.items.list(conversation.id, { limit: 1, order: 'asc' })) everything.push(item);
    expect(everything.map(textOf)).toEqual(['user:first', 'user:second', 'assistant:third']);

    const second = asc.data[1] as any;
    expect(await client.conversations.items.retrieve(second.id, { conversation_id: conversation.id })).toMatchObject({
      id: second.id,
      status: 'completed',
      content: [{ type: 'input_text', text: 'second' }],
    });
    const afterDelete = await client.conversations.items.delete(second.id, { conversation_id: conversation.id });
    expect(afterDelete).toMatchObject({ id: conversation.id, object: 'conversation' });
    await expect(client.conversations.items.retrieve(second.id, { conversation_id: conversation.id })).rejects.toMatchObject({ status: 404, code: 'item_not_found' });
    expect((await client.conversations.items.list(conversation.id, { order: 'asc' })).data.map(textOf)).toEqual(['user:first', 'assistant:third']);
  });

  it('validates bodies and names the parameter', async () => {
    const bad = await fetch(`${stack.url}/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ type: 'message', role: 'robot', content: 'x' }] }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.param).toBe('items[0].role');
    const badMeta = await fetch(`${stack.url}/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { n: 1 } }),
    });
    expect(((await badMeta.json()) as any).error.param).toBe('metadata.n');
  });

  it('carries a conversation across requests: prior items are the model input, each turn is appended', async () => {
    const conversation = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'My name is Ada.' }] });
    const first = await client.responses.create({ model: 'm', conversation: conversation.id, input: 'What is my name? [[say Your name is Ada.]]' });
    expect((first as any).conversation).toEqual({ id: conversation.id });
    expect(lastUpstreamInput(stack).map(textOf)).toEqual(['user:My name is Ada.', 'user:What is my name? [[say Your name is Ada.]]']);

    const call = await client.responses.create({
      model: 'm',
      conversation: { id: conversation.id },
      input: 'Weather? [[call get_weather {"city": "Lima"}]]',
      tools: [weatherTool],
    });
    const fc = call.output.find((i) => i.type === 'function_call') as any;
    const answer = await client.responses.create({
      model: 'm',
      conversation: conversation.id,
      input: [{ type: 'function_call_output', call_id: fc.call_id, output: 'sunny, 25C' }],
      tools: [weatherTool],
    });
    expect(answer.output_text).toContain('sunny, 25C');
    expect(lastUpstreamInput(stack).map(textOf)).toEqual([
      'user:My name is Ada.',
      'user:What is my name? [[say Your name is Ada.]]',
      'assistant:Your name is Ada.',
      'user:Weather? [[call get_weather {"city": "Lima"}]]',
      'call:get_weather',
      'output:sunny, 25C',
    ]);

    const items = await client.conversations.items.list(conversation.id, { order: 'asc', limit: 100 });
    expect(items.data.map((i: any) => i.type)).toEqual(['message', 'message', 'message', 'message', 'function_call', 'function_call_output', 'message']);
    expect(items.data.at(-1)).toMatchObject({ id: answer.output.at(-1)!.id });
  });

  it('appends to the conversation for store:false too, without storing the response', async () => {
    const conversation = await client.conversations.create({});
    const response = await client.responses.create({ model: 'm', conversation: conversation.id, input: '[[say unstored]]', store: false });
    await expect(client.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
    const items = await client.conversations.items.list(conversation.id, { order: 'asc' });
    expect(items.data.map(textOf)).toEqual(['user:[[say unstored]]', 'assistant:unstored']);
  });

  it('refuses an unknown conversation with 404 conversation_not_found, and conversation with previous_response_id with 400', async () => {
    const err = await client.responses.create({ model: 'm', conversation: 'conv_nope', input: 'hi' }).catch((e) => e);
    expect(err.status).toBe(404);
    expect(err.error).toMatchObject({ code: 'conversation_not_found', param: 'conversation' });
    const both = await client.responses.create({ model: 'm', conversation: 'conv_x', previous_response_id: 'resp_y', input: 'hi' }).catch((e) => e);
    expect(both.status).toBe(400);
  });
});
