import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { SocketClient } from './support/socket-client.js';
import { collect, weatherTool } from './support/fixtures.js';

const validator = new OpenResponsesValidator();

/** The spec's schema for WebSocket error frames. */
const errorEventSchema = (() => {
  const spec = JSON.parse(readFileSync(resolve(process.cwd(), '../shared/reference/openresponses-openapi.json'), 'utf8'));
  const ajv = new Ajv({ strict: false, allErrors: true, discriminator: false });
  ajv.addSchema({ $id: 'spec', components: spec.components });
  return ajv.getSchema('spec#/components/schemas/WebSocketErrorEvent')!;
})();

/** Events with the parts that differ per response (ids, timestamps) blanked. */
function shape(events: any[]): any[] {
  return JSON.parse(
    JSON.stringify(events)
      .replace(/"(resp|msg|rs|fc|call)_[0-9a-f]+"/g, '"$1_*"')
      .replace(/"(created_at|completed_at)":\d+/g, '"$1":0'),
  );
}

describe('WebSocket mode (GET /v1/responses upgrade, real ws client)', () => {
  let stack: GatewayStack;
  const sockets: SocketClient[] = [];
  const open = async (headers?: Record<string, string>) => {
    const socket = await SocketClient.open(stack, headers);
    sockets.push(socket);
    return socket;
  };

  beforeAll(async () => {
    stack = await startStack({ simulator: { reasoning: true } });
  });
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((s) => s.close()));
  });
  afterAll(() => stack.close());

  it('sends the same events, in the same order, as the SSE stream of the same request', async () => {
    const body = { model: 'm', input: 'Hi [[say Socket and stream agree.]]', tools: [weatherTool] };
    const sse = await collect(await stack.openai.responses.create({ ...body, stream: true }));
    const socket = await open();
    socket.create(body);
    const frames = await socket.untilDone();
    expect(frames.map((f) => f.type)).toEqual(sse.map((e) => e.type));
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
    expect(shape(frames)).toEqual(shape(sse));
    frames.forEach((f) => validator.assertEvent(f));
    expect(frames.at(-1).response.output.at(-1).content[0].text).toBe('Socket and stream agree.');
  });

  it('runs several responses on one socket, in order, queued behind each other', async () => {
    const socket = await open();
    for (const word of ['one', 'two', 'three']) socket.create({ model: 'm', input: `[[say ${word}]]` });
    const done: string[] = [];
    for (let i = 0; i < 3; i++) {
      const frames = await socket.untilDone();
      expect(frames[0].type).toBe('response.created');
      done.push(frames.at(-1).response.output.at(-1).content[0].text);
    }
    expect(done).toEqual(['one', 'two', 'three']);
  });

  it('continues store:false responses on the same socket (and only there), with the full transcript upstream', async () => {
    const socket = await open();
    socket.create({ model: 'm', store: false, input: 'Weather? [[call get_weather {"city": "Bergen"}]]', tools: [weatherTool] });
    const first = (await socket.untilDone()).at(-1).response;
    const call = first.output.find((i: any) => i.type === 'function_call');
    socket.create({
      model: 'm',
      store: false,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'rain, as always' }],
    });
    const second = (await socket.untilDone()).at(-1);
    expect(second.type).toBe('response.completed');
    expect(second.response.output.at(-1).content[0].text).toContain('rain, as always');
    expect(second.response.tools.map((t: any) => t.name)).toEqual(['get_weather']);
    const upstream = stack.simulator.requests.at(-1)!.body as any;
    expect(upstream.store).toBe(false);
    expect(upstream.input.map((i: any) => i.type)).toEqual(['message', 'reasoning', 'function_call', 'function_call_output']);

    socket.create({ model: 'm', store: false, previous_response_id: second.response.id, input: '[[say third turn]]' });
    expect((await socket.untilDone()).at(-1).type).toBe('response.completed');

    // Not stored: neither HTTP nor another socket can continue it.
    await expect(stack.openai.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    const other = await open();
    other.create({ model: 'm', previous_response_id: first.id, input: 'hi' });
    expect(await other.next()).toMatchObject({ type: 'error', status: 404, error: { code: 'previous_response_not_found' } });
  });

  it('answers an unknown previous_response_id with an error frame and keeps the socket open', async () => {
    const socket = await open();
    socket.create({ model: 'm', previous_response_id: 'resp_unknown', input: 'hi' });
    const error = await socket.next();
    expect(errorEventSchema(error) ? [] : errorEventSchema.errors).toEqual([]);
    expect(error).toEqual({
      type: 'error',
      status: 404,
      error: expect.objectContaining({ code: 'previous_response_not_found', param: 'previous_response_id', message: expect.any(String) }),
    });
    socket.create({ model: 'm', input: '[[say still open]]' });
    expect((await socket.untilDone()).at(-1).type).toBe('response.completed');
  });

  it('evicts a response from the socket cache when a continuation of it fails', async () => {
    const socket = await open();
    socket.create({ model: 'm', store: false, input: '[[say first]]' });
    const first = (await socket.untilDone()).at(-1).response;
    socket.create({ model: 'm', store: false, previous_response_id: first.id, input: '[[fault status=400 message="upstream says no"]]' });
    const failure = await socket.next();
    expect(failure).toMatchObject({ type: 'error', status: 400 });
    socket.create({ model: 'm', store: false, previous_response_id: first.id, input: 'retry' });
    expect(await socket.next()).toMatchObject({ type: 'error', status: 404, error: { code: 'previous_response_not_found' } });
  });

  it('evicts it too when the continuation fails after it started streaming', async () => {
    const socket = await open();
    socket.create({ model: 'm', store: false, input: '[[say first]]' });
    const first = (await socket.untilDone()).at(-1).response;
    socket.create({ model: 'm', store: false, previous_response_id: first.id, input: '[[tokens 50]] [[fault reset_after=6]]' });
    const frames = await socket.untilDone();
    expect(frames[0].type).toBe('response.created');
    expect(frames.at(-1)).toMatchObject({ type: 'response.failed', response: { status: 'failed' } });
    socket.create({ model: 'm', store: false, previous_response_id: first.id, input: 'retry' });
    expect(await socket.next()).toMatchObject({ type: 'error', status: 404, error: { code: 'previous_response_not_found' } });
  });

  it('answers bad frames with error frames and keeps the socket open', async () => {
    const socket = await open();
    socket.send('{not json');
    expect(await socket.next()).toMatchObject({ type: 'error', status: 400, error: { code: 'invalid_json' } });
    socket.send({ type: 'session.update' });
    expect(await socket.next()).toMatchObject({ type: 'error', status: 400, error: { code: 'unknown_event_type', param: 'type' } });
    socket.create({ model: 'm', input: [{ type: 'message', role: 'robot', content: 'x' }] });
    expect(await socket.next()).toMatchObject({ type: 'error', status: 400, error: { param: 'input[0].role' } });
    socket.create({ model: 'm', input: 'x', stream: false });
    expect(await socket.next()).toMatchObject({ type: 'error', status: 400, error: { param: 'stream' } });
    socket.create({ model: 'm', input: '[[say fine]]' });
    expect((await socket.untilDone()).at(-1).type).toBe('response.completed');
  });

  it('aborts the response in flight when the socket closes', async () => {
    const socket = await open();
    const abortedBefore = stack.simulator.stats.aborted;
    socket.create({ model: 'm', input: '[[tokens 400]] [[delay token=10]]' });
    for (;;) {
      if ((await socket.next()).type === 'response.output_text.delta') break;
    }
    await socket.close();
    const deadline = Date.now() + 3000;
    while (stack.simulator.stats.aborted === abortedBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(stack.simulator.stats.aborted).toBe(abortedBefore + 1);
  });

  it('works with the openai SDK’s own WebSocket client', async () => {
    const { ResponsesWS } = await import('openai/resources/responses/ws');
    const rws = new ResponsesWS(stack.openai);
    const events: any[] = [];
    const finished = new Promise<void>((resolve, reject) => {
      rws.on('event', (event: any) => {
        events.push(event);
        if (event.type === 'response.completed') resolve();
      });
      rws.on('error', reject);
    });
    rws.send({ type: 'response.create', model: 'm', input: '[[say via the SDK]]' } as any);
    await finished;
    rws.close();
    expect(events.at(-1).response.output.at(-1).content[0].text).toBe('via the SDK');
  });
});

describe('WebSocket mode with API keys', () => {
  let stack: GatewayStack;

  beforeAll(async () => {
    stack = await startStack({ config: { auth: { apiKeys: ['sk-socket-key-1', 'sk-socket-key-2'] } } });
  });
  afterAll(() => stack.close());

  it('refuses the upgrade without a valid key, with a 401 envelope', async () => {
    for (const headers of [{}, { authorization: 'Bearer nope' }] as Array<Record<string, string>>) {
      const err = await SocketClient.open(stack, headers).catch((e) => e);
      expect(err.status).toBe(401);
      const body = await new Promise<string>((resolve) => {
        let text = '';
        err.res.on('data', (chunk: Buffer) => (text += chunk));
        err.res.on('end', () => resolve(text));
      });
      expect(JSON.parse(body).error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    }
  });

  it('scopes stored responses to the socket’s key', async () => {
    const socket = await SocketClient.open(stack, { authorization: 'Bearer sk-socket-key-1' });
    socket.create({ model: 'm', input: '[[say owned]]' });
    const done = (await socket.untilDone()).at(-1);
    await socket.close();
    const owner = new OpenAI({ baseURL: stack.url, apiKey: 'sk-socket-key-1', maxRetries: 0 });
    const stranger = new OpenAI({ baseURL: stack.url, apiKey: 'sk-socket-key-2', maxRetries: 0 });
    expect((await owner.responses.retrieve(done.response.id)).output_text).toBe('owned');
    await expect(stranger.responses.retrieve(done.response.id)).rejects.toMatchObject({ status: 404 });

    const other = await SocketClient.open(stack, { authorization: 'Bearer sk-socket-key-2' });
    other.create({ model: 'm', previous_response_id: done.response.id, input: 'x' });
    expect(await other.next()).toMatchObject({ type: 'error', status: 404, error: { code: 'previous_response_not_found' } });
    await other.close();
  });
});
