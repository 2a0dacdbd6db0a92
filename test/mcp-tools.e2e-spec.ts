import { createRequire } from 'node:module';
import OpenAI from 'openai';
import { StreamableTestServer, startRedirectServer } from './support/mcp/mcp-test-servers.js';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { collect } from './support/fixtures.js';

const validator = new OpenResponsesValidator();
const SECRET = 'sk-e2e-mcp-secret-789';
const OPERATOR_KEY = 'op-key-e2e-0001';
const MODEL = 'switchyard-sim';
const EVERYTHING_SERVER = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

/** Event types with each item event tagged by the item's type, for order assertions. */
function eventTrace(events: any[]): string[] {
  const itemTypes = new Map<string, string>();
  return events.map((e) => {
    if (e.item?.id) itemTypes.set(e.item.id, e.item.type);
    if (e.type === 'response.output_item.added' || e.type === 'response.output_item.done') return `${e.type}:${e.item.type}`;
    return e.type;
  });
}

describe('MCP tools through the gateway (openai client)', () => {
  let server: StreamableTestServer;
  let other: StreamableTestServer;
  let deadUrl: string;
  let redirect: Awaited<ReturnType<typeof startRedirectServer>>;
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    server = await StreamableTestServer.start();
    other = await StreamableTestServer.start();
    const dead = await StreamableTestServer.start();
    deadUrl = dead.url;
    await dead.close();
    // Bounces to a loopback port that allowedHosts does not list.
    redirect = await startRedirectServer('http://127.0.0.1:9/mcp');
    stack = await startStack({
      config: {
        mcp: {
          allowedHosts: [`127.0.0.1:${server.port}`, `127.0.0.1:${other.port}`, new URL(deadUrl).host, new URL(redirect.url).host],
          discoveryTimeoutMs: 5_000,
          servers: [
            { label: 'ops', transport: 'streamable-http', url: server.url, headers: { 'X-Operator-Key': OPERATOR_KEY } },
            { label: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
          ],
        },
        server: { keepAliveMs: 60_000 },
      },
    });
    client = stack.openai;
  });

  afterAll(async () => {
    await stack.close();
    await Promise.all([server.close(), other.close(), redirect.close()]);
  });

  const demo = (extra: Record<string, unknown> = {}) => ({ type: 'mcp', server_label: 'demo', server_url: server.url, ...extra }) as any;
  const callsTo = (name: string) => server.log.calls.filter((c) => c.name === name);

  it('discovers, calls and answers, blocking; secrets stay out of the response', async () => {
    const response = await client.responses.create({
      model: MODEL,
      input: 'Echo hello. [[call demo__echo {"text":"hello"}]]',
      tools: [demo({ require_approval: 'never', authorization: SECRET, headers: { 'X-Trace': SECRET } })],
    });
    validator.assertResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output.map((i) => i.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    const [list, call] = response.output as any[];
    expect(list).toMatchObject({ server_label: 'demo' });
    expect(list).not.toHaveProperty('error');
    expect(list.id).toMatch(/^mcpl_/);
    expect(list.tools.map((t: any) => t.name)).toEqual(['echo', 'add', 'delete_item', 'fail', 'explode', 'hang']);
    expect(call).toEqual({
      id: expect.stringMatching(/^mcp_/),
      type: 'mcp_call',
      server_label: 'demo',
      name: 'echo',
      arguments: expect.any(String),
      output: 'echo: hello',
      error: null,
      status: 'completed',
      approval_request_id: null,
    });
    expect(JSON.parse(call.arguments)).toEqual({ text: 'hello' });
    expect(response.output_text).toBe('Based on the tool result: echo: hello');
    expect(response.tools).toEqual([{ type: 'mcp', server_label: 'demo', server_url: server.url, require_approval: 'never' }]);
    expect(JSON.stringify(response)).not.toContain(SECRET);
    expect(server.log.httpRequests.some((r) => r.headers.authorization === `Bearer ${SECRET}` && r.headers['x-trace'] === SECRET)).toBe(true);
  });

  it('streams mcp_list_tools and mcp_call lifecycles in the documented order', async () => {
    const events = await collect(
      await client.responses.create({
        model: MODEL,
        input: 'Add numbers. [[call demo__add {"a":2,"b":40}]]',
        tools: [demo({ require_approval: 'never' })],
        stream: true,
      }),
    );
    events.forEach((e) => validator.assertEvent(e));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const trace = eventTrace(events);
    const messageStart = trace.indexOf('response.output_item.added:message');
    expect(trace.slice(0, messageStart)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added:mcp_list_tools',
      'response.mcp_list_tools.in_progress',
      'response.mcp_list_tools.completed',
      'response.output_item.done:mcp_list_tools',
      'response.output_item.added:mcp_call',
      'response.mcp_call.in_progress',
      'response.mcp_call_arguments.delta',
      'response.mcp_call_arguments.done',
      'response.mcp_call.completed',
      'response.output_item.done:mcp_call',
    ]);
    expect(trace.at(-1)).toBe('response.completed');
    const added = events.find((e) => e.type === 'response.output_item.added' && e.item.type === 'mcp_call');
    expect(added.item).toMatchObject({ status: 'in_progress', arguments: '', output: null, error: null, approval_request_id: null });
    const callId = added.item.id;
    for (const e of events.filter((x) => x.type.startsWith('response.mcp_call'))) {
      expect(e.item_id).toBe(callId);
      expect(e.output_index).toBe(added.output_index);
    }
    const done = events.find((e) => e.type === 'response.mcp_call_arguments.done').arguments;
    expect(JSON.parse(done)).toEqual({ a: 2, b: 40 });
    expect(events.find((e) => e.type === 'response.mcp_call_arguments.delta').delta).toBe(done);
    expect(events.find((e) => e.type === 'response.output_item.done' && e.item.type === 'mcp_call').item.arguments).toBe(done);
    const final = events.at(-1).response;
    validator.assertResponse(final);
    expect(final.output[1]).toMatchObject({ type: 'mcp_call', status: 'completed', output: '{"sum":42}' });
    expect(final.output[2].content[0].text).toBe('Based on the tool result: {"sum":42}');
  });

  it('does not list the tools again on a continuation whose history has the listing', async () => {
    const first = await client.responses.create({
      model: MODEL,
      input: 'Echo one. [[call demo__echo {"text":"one"}]]',
      tools: [demo({ require_approval: 'never' })],
    });
    const events = await collect(
      await client.responses.create({
        model: MODEL,
        tools: [demo({ require_approval: 'never' })],
        stream: true,
        input: [
          { role: 'user', content: 'Echo one. [[call demo__echo {"text":"one"}]]' },
          ...first.output,
          { role: 'user', content: 'Now add. [[call demo__add {"a":1,"b":2}]]' },
        ] as any,
      }),
    );
    events.forEach((e) => validator.assertEvent(e));
    expect(events.some((e) => e.type.startsWith('response.mcp_list_tools'))).toBe(false);
    const final = events.at(-1).response;
    validator.assertResponse(final);
    expect(final.output.map((i: any) => i.type)).toEqual(['mcp_call', 'message']);
    expect(final.output[0]).toMatchObject({ name: 'add', status: 'completed', output: '{"sum":3}' });
    // The earlier call reached the model as a call with its output.
    const upstreamInput = (stack.simulator.requests.at(-1)!.body as any).input as any[];
    expect(upstreamInput.some((i) => i.type === 'function_call' && i.name === 'demo__echo' && i.call_id === first.output[1].id)).toBe(true);
    expect(upstreamInput.some((i) => i.type === 'function_call_output' && i.output === 'echo: one')).toBe(true);
  });

  it('asks for approval by default, then runs the approved call and answers', async () => {
    const prompt = 'Delete item 7. [[call demo__delete_item {"id":"7"}]]';
    const first = await client.responses.create({ model: MODEL, input: prompt, tools: [demo()] });
    validator.assertResponse(first);
    expect(first.output.map((i) => i.type)).toEqual(['mcp_list_tools', 'mcp_approval_request']);
    const request = first.output[1] as any;
    expect(request).toEqual({ id: expect.stringMatching(/^mcpr_/), type: 'mcp_approval_request', server_label: 'demo', name: 'delete_item', arguments: expect.any(String) });
    expect(JSON.parse(request.arguments)).toEqual({ id: '7' });
    expect(callsTo('delete_item')).toHaveLength(0);

    const events = await collect(
      await client.responses.create({
        model: MODEL,
        tools: [demo()],
        stream: true,
        input: [{ role: 'user', content: prompt }, ...first.output, { type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] as any,
      }),
    );
    events.forEach((e) => validator.assertEvent(e));
    const trace = eventTrace(events);
    expect(trace.slice(0, 8)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added:mcp_call',
      'response.mcp_call.in_progress',
      'response.mcp_call_arguments.delta',
      'response.mcp_call_arguments.done',
      'response.mcp_call.completed',
      'response.output_item.done:mcp_call',
    ]);
    const second = events.at(-1).response;
    validator.assertResponse(second);
    expect(second.status).toBe('completed');
    expect(second.output.map((i: any) => i.type)).toEqual(['mcp_call', 'message']);
    expect(second.output[0]).toMatchObject({ name: 'delete_item', status: 'completed', output: 'deleted 7\ndone', approval_request_id: request.id });
    expect(second.output[1].content[0].text).toBe('Based on the tool result: deleted 7\ndone');
    expect(callsTo('delete_item')).toEqual([{ name: 'delete_item', args: { id: '7' } }]);
  });

  it('does not run an approved call again when a later turn replays the whole conversation', async () => {
    const prompt = 'Delete item 8. [[call demo__delete_item {"id":"8"}]]';
    const first = await client.responses.create({ model: MODEL, input: prompt, tools: [demo()] });
    const request = first.output[1] as any;
    const answered = [{ role: 'user', content: prompt }, ...first.output, { type: 'mcp_approval_response', approval_request_id: request.id, approve: true }];
    const second = await client.responses.create({ model: MODEL, tools: [demo()], input: answered as any });
    expect(second.output[0]).toMatchObject({ type: 'mcp_call', status: 'completed', approval_request_id: request.id });

    const third = await client.responses.create({
      model: MODEL,
      tools: [demo()],
      input: [...answered, ...second.output, { role: 'user', content: 'Thanks. [[say You are welcome.]]' }] as any,
    });
    validator.assertResponse(third);
    expect(third.output.map((i) => i.type)).toEqual(['message']);
    expect(third.output_text).toBe('You are welcome.');
    expect(callsTo('delete_item').filter((c) => c.args.id === '8')).toHaveLength(1);
    // The model sees the approved call once, answered, as it did when it ran.
    const upstreamInput = (stack.simulator.requests.at(-1)!.body as any).input as any[];
    const calls = upstreamInput.filter((i) => i.type === 'function_call');
    const outputs = upstreamInput.filter((i) => i.type === 'function_call_output');
    expect(calls.map((c) => c.call_id)).toEqual([request.id]);
    expect(outputs).toEqual([{ type: 'function_call_output', call_id: request.id, output: 'deleted 8\ndone' }]);
  });

  it('holds an approval only for the server_url and credentials it was asked under, on both continuation paths', async () => {
    const prompt = 'Delete item 11. [[call demo__delete_item {"id":"11"}]]';
    const asked = demo({ authorization: SECRET, headers: { 'X-Team': 'blue' } });
    const first = await client.responses.create({ model: MODEL, input: prompt, tools: [asked], store: true });
    const request = first.output.find((i) => i.type === 'mcp_approval_request') as any;
    // Nothing secret is in the id the client keeps and the store holds.
    expect(request.id).toMatch(/^mcpr_[0-9a-f]{48}$/);
    expect(JSON.stringify(first)).not.toContain(SECRET);
    const answer = { type: 'mcp_approval_response', approval_request_id: request.id, approve: true };
    const replay = [{ role: 'user', content: prompt }, ...first.output, answer];
    const sentAgain = [
      demo({ authorization: 'sk-someone-elses-token', headers: { 'X-Team': 'blue' } }),
      demo({ headers: { 'X-Team': 'blue' } }),
      demo({ authorization: SECRET, headers: { 'X-Team': 'red' } }),
      demo({ authorization: SECRET, headers: { 'X-Team': 'blue' }, server_url: other.url }),
    ];
    const refused = async (call: Promise<unknown>) => {
      const err = await call.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param: 'tools', code: 'approval_declaration_mismatch' });
    };
    const before = stack.simulator.requests.length;
    for (const tool of sentAgain) {
      await refused(client.responses.create({ model: MODEL, tools: [tool], input: replay as any }));
      await refused(client.responses.create({ model: MODEL, tools: [tool], previous_response_id: first.id, input: [answer] as any }));
    }
    // A replayed request item whose call was edited is not what the user approved either.
    const edited = replay.map((i: any) => (i.id === request.id ? { ...i, arguments: '{"id":"12"}' } : i));
    await refused(client.responses.create({ model: MODEL, tools: [asked], input: edited as any }));
    // None of them ran the call or the model, on either server.
    expect(stack.simulator.requests.length).toBe(before);
    expect(callsTo('delete_item').filter((c) => ['11', '12'].includes(String(c.args.id)))).toHaveLength(0);
    expect(other.log.calls).toHaveLength(0);

    // The declaration the user saw: the approval holds, on each path, and the call runs.
    const viaHistory = await client.responses.create({ model: MODEL, tools: [asked], input: replay as any });
    expect(viaHistory.output[0]).toMatchObject({ type: 'mcp_call', status: 'completed', approval_request_id: request.id });
    const viaStored = await client.responses.create({ model: MODEL, tools: [asked], previous_response_id: first.id, input: [answer] as any });
    expect(viaStored.output[0]).toMatchObject({ type: 'mcp_call', status: 'completed', approval_request_id: request.id });
    expect(callsTo('delete_item').filter((c) => c.args.id === '11')).toHaveLength(2);
  });

  it('answers an approval on a stored conversation through previous_response_id', async () => {
    const first = await client.responses.create({ model: MODEL, input: 'Delete item 9. [[call demo__delete_item {"id":"9"}]]', tools: [demo()], store: true });
    const request = first.output.find((i) => i.type === 'mcp_approval_request') as any;
    const second = await client.responses.create({
      model: MODEL,
      tools: [demo()],
      previous_response_id: first.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] as any,
    });
    validator.assertResponse(second);
    expect(second.output.map((i) => i.type)).toEqual(['mcp_call', 'message']);
    expect(second.output[0]).toMatchObject({ status: 'completed', approval_request_id: request.id });
    expect(callsTo('delete_item').filter((c) => c.args.id === '9')).toHaveLength(1);
  });

  it('uses operator-configured servers by label: streamable HTTP and the published server-everything over stdio', async () => {
    const response = await client.responses.create({
      model: MODEL,
      input: 'Both. [[call ops__echo {"text":"from ops"}]] [[call everything__echo {"message":"from everything"}]]',
      tools: [
        { type: 'mcp', server_label: 'ops', require_approval: 'never' },
        { type: 'mcp', server_label: 'everything', require_approval: 'never', allowed_tools: ['echo', 'get-sum'] },
      ] as any,
    });
    validator.assertResponse(response);
    expect(response.output.map((i) => i.type)).toEqual(['mcp_list_tools', 'mcp_list_tools', 'mcp_call', 'mcp_call', 'message']);
    expect((response.output[1] as any).tools.map((t: any) => t.name).sort()).toEqual(['echo', 'get-sum']);
    expect(response.output[2]).toMatchObject({ server_label: 'ops', name: 'echo', status: 'completed', output: 'echo: from ops' });
    expect(response.output[3]).toMatchObject({ server_label: 'everything', name: 'echo', status: 'completed', output: 'Echo: from everything' });
    expect(server.log.httpRequests.some((r) => r.headers['x-operator-key'] === OPERATOR_KEY)).toBe(true);
    expect(JSON.stringify(response)).not.toContain(OPERATOR_KEY);
  });

  it('tells the model about a denied call, which never reaches the server', async () => {
    const prompt = 'Delete item 99. [[call demo__delete_item {"id":"99"}]]';
    const tools = [demo({ require_approval: { never: { tool_names: ['echo'] } } })];
    const first = await client.responses.create({ model: MODEL, input: prompt, tools });
    const request = first.output.find((i) => i.type === 'mcp_approval_request') as any;
    expect(request).toBeDefined();
    const second = await client.responses.create({
      model: MODEL,
      tools,
      input: [{ role: 'user', content: prompt }, ...first.output, { type: 'mcp_approval_response', approval_request_id: request.id, approve: false, reason: 'not today' }] as any,
    });
    validator.assertResponse(second);
    expect(second.status).toBe('completed');
    expect(second.output.map((i) => i.type)).toEqual(['message']);
    expect(second.output_text).toMatch(/^Based on the tool result: .*approval_denied.*not today/);
    expect(callsTo('delete_item').filter((c) => c.args.id === '99')).toHaveLength(0);
  });

  it('fails a call the tool reports as an error, and the model still answers', async () => {
    const events = await collect(
      await client.responses.create({
        model: MODEL,
        input: 'Try it. [[call demo__fail {}]]',
        tools: [demo({ require_approval: 'never' })],
        stream: true,
      }),
    );
    events.forEach((e) => validator.assertEvent(e));
    expect(events.map((e) => e.type)).toContain('response.mcp_call.failed');
    const final = events.at(-1).response;
    validator.assertResponse(final);
    expect(final.output[1]).toMatchObject({ type: 'mcp_call', status: 'failed', output: null, error: 'the widget is broken' });
    expect(final.output[2].content[0].text).toBe('Based on the tool result: the widget is broken');
  });

  it('reports an unreachable server as a failed listing and still completes', async () => {
    const events = await collect(
      await client.responses.create({
        model: MODEL,
        input: '[[say No tools today.]]',
        tools: [{ type: 'mcp', server_label: 'gone', server_url: deadUrl, authorization: SECRET } as any],
        stream: true,
      }),
    );
    events.forEach((e) => validator.assertEvent(e));
    expect(eventTrace(events).slice(0, 6)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added:mcp_list_tools',
      'response.mcp_list_tools.in_progress',
      'response.mcp_list_tools.failed',
      'response.output_item.done:mcp_list_tools',
    ]);
    const final = events.at(-1).response;
    validator.assertResponse(final);
    expect(final.status).toBe('completed');
    expect(final.output[0]).toMatchObject({ type: 'mcp_list_tools', server_label: 'gone', tools: [], error: 'MCP server "gone" is unreachable.' });
    expect(final.output_text ?? final.output[1].content[0].text).toBe('No tools today.');
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });

  describe('refusals', () => {
    async function badRequest(body: Record<string, unknown>): Promise<InstanceType<typeof OpenAI.BadRequestError>> {
      try {
        await client.responses.create({ model: MODEL, input: 'hi', ...body } as any);
      } catch (err) {
        if (err instanceof OpenAI.BadRequestError) return err;
        throw err;
      }
      throw new Error('expected a 400');
    }

    it.each([
      ['link-local metadata', 'http://169.254.169.254/latest/meta-data/'],
      ['a private address', 'http://192.168.1.10:8080/mcp'],
      ['loopback on an unlisted port', 'http://127.0.0.1:9/mcp'],
      ['IPv6 loopback', 'http://[::1]:8080/mcp'],
      ['a host not in allowedHosts', 'https://mcp.example.org/mcp'],
    ])('refuses %s as a 400 naming the server_url', async (_what, url) => {
      for (const stream of [false, true]) {
        const err = await badRequest({
          stream,
          tools: [
            { type: 'function', name: 'noop', parameters: { type: 'object', properties: {} } },
            { type: 'mcp', server_label: 'x', server_url: url, authorization: SECRET },
          ],
        });
        expect(err.status).toBe(400);
        expect((err.error as any).param).toBe('tools[1].server_url');
        expect(err.message).not.toContain(SECRET);
      }
    });

    it('refuses a server whose redirect leads to loopback, as a 400 naming the server_url', async () => {
      const err = await badRequest({ tools: [{ type: 'mcp', server_label: 'bounce', server_url: redirect.url }] });
      expect((err.error as any).param).toBe('tools[0].server_url');
      expect(err.message).toMatch(/redirect target host "127\.0\.0\.1:9"/);
      expect(redirect.hits()).toBeGreaterThan(0);
    });

    it('refuses connector_id and declarations without a server', async () => {
      const connector = await badRequest({ tools: [{ type: 'mcp', server_label: 'drive', connector_id: 'connector_googledrive' }] });
      expect((connector.error as any).param).toBe('tools[0].connector_id');
      expect(connector.message).toMatch(/connectors are not supported/);
      const nowhere = await badRequest({ tools: [{ type: 'mcp', server_label: 'nowhere' }] });
      expect((nowhere.error as any).param).toBe('tools[0].server_url');
    });
  });
});
