import http from 'node:http';
import fc from 'fast-check';
import { parseSse, startStack, type GatewayStack } from './support/gateway-harness.js';
import { rawPost, type RawResponse } from './support/robustness/raw-http.js';
import { NapToolModule } from '#core/testing/nap-tool.module.js';

/**
 * Property-based fuzzing of `POST /v1/responses` over real HTTP: whatever the
 * body, the answer is a 4xx in the OpenAI error envelope, or a 200 for bodies
 * that happen to be valid; never a 5xx, never a hang, and the gateway keeps
 * serving (a good request succeeds after every batch).
 *
 * Runs are bounded in number and in time. `FUZZ_SEED=<n>` replays a run;
 * fast-check prints the seed and the shrunk counterexample of any failure.
 */
const BODY_LIMIT = 256 * 1024;
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const settings = (numRuns: number, timeLimitMs: number) => ({ numRuns, interruptAfterTimeLimit: timeLimitMs, seed: SEED });

/** Every top-level field of the request body the gateway reads. */
const FIELDS = [
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'temperature',
  'top_p',
  'max_output_tokens',
  'max_tool_calls',
  'text',
  'reasoning',
  'truncation',
  'metadata',
  'store',
  'previous_response_id',
  'conversation',
  'include',
  'stream',
  'stream_options',
  'prompt_cache_key',
  'safety_identifier',
  'user',
  'service_tier',
  'background',
  'top_logprobs',
  'presence_penalty',
  'frequency_penalty',
  'prompt',
] as const;

describe('fuzzing POST /v1/responses (fast-check, real HTTP)', () => {
  let stack: GatewayStack;
  let agent: http.Agent;
  let url: string;

  beforeAll(async () => {
    stack = await startStack({ imports: [NapToolModule], config: { server: { bodyLimitBytes: BODY_LIMIT } } });
    url = `${stack.url}/responses`;
    agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  });
  afterAll(async () => {
    agent.destroy();
    await stack.close();
  });
  afterEach(async () => {
    // The server keeps serving after each batch.
    const res = await send(JSON.stringify({ model: 'm', input: '[[say still serving]]' }));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).output.at(-1).content[0].text).toBe('still serving');
  });

  function send(body: Buffer | string, headers?: Record<string, string>): Promise<RawResponse> {
    return rawPost(url, body, { agent, headers, timeoutMs: 10_000 });
  }

  /** The property every answer must have; throws with the request and answer when it does not. */
  function assertWellFormed(res: RawResponse, sent: Buffer | string): void {
    const show = () => `request ${String(sent).slice(0, 300)}\n→ HTTP ${res.status} ${res.text.slice(0, 500)}`;
    if (res.status >= 500 || res.status < 200 || (res.status > 200 && res.status < 400)) throw new Error(`unexpected status: ${show()}`);
    if (res.status === 200) {
      if (String(res.headers['content-type']).includes('text/event-stream')) {
        const events = parseSse(res.text);
        const last = events[events.length - 1]?.data;
        const terminal = ['response.completed', 'response.incomplete', 'response.failed'];
        if (!last || !terminal.includes(last.type)) throw new Error(`stream without a terminal event: ${show()}`);
        if (last.type === 'response.failed' && last.response?.error?.code === 'server_error') throw new Error(`internal failure mid-stream: ${show()}`);
      } else if (JSON.parse(res.text).object !== 'response') {
        throw new Error(`200 without a response object: ${show()}`);
      }
      return;
    }
    let envelope: any;
    try {
      envelope = JSON.parse(res.text);
    } catch {
      throw new Error(`4xx without a JSON body: ${show()}`);
    }
    const error = envelope?.error;
    const ok = error && typeof error.message === 'string' && error.message.length > 0 && typeof error.type === 'string' && 'param' in error && 'code' in error;
    if (!ok) throw new Error(`4xx without the error envelope: ${show()}`);
  }

  const checked = async (body: Buffer | string, headers?: Record<string, string>) => {
    const res = await send(body, headers);
    assertWellFormed(res, body);
    return res;
  };

  it('malformed JSON: 400 invalid_json', async () => {
    const valid = JSON.stringify({ model: 'm', input: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', name: 'f' }] });
    const malformed = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.nat({ max: valid.length - 1 }).map((n) => valid.slice(0, n)),
      fc
        .tuple(fc.nat({ max: valid.length }), fc.constantFrom('}', ']', ',', '"', ':', '\\', '{{', 'NaN', 'undefined'))
        .map(([at, junk]) => valid.slice(0, at) + junk + valid.slice(at)),
    );
    await fc.assert(
      fc.asyncProperty(malformed, async (text) => {
        const res = await checked(text);
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        if (!parses && text.trim() !== '') {
          expect(res.status).toBe(400);
          expect(JSON.parse(res.text).error.code).toBe('invalid_json');
        }
      }),
      settings(200, 6000),
    );
  });

  it('wrong types for every field: a 4xx naming a field, or a 200', async () => {
    const fields = fc.dictionary(fc.constantFrom(...FIELDS), fc.jsonValue({ maxDepth: 3 }), { minKeys: 1, maxKeys: 4 });
    await fc.assert(
      fc.asyncProperty(fields, async (overrides) => {
        const body = JSON.stringify({ model: 'm', input: 'hi', ...overrides });
        const res = await checked(body);
        if (res.status >= 400 && res.status < 500 && res.status !== 404 && res.status !== 413) {
          const { error } = JSON.parse(res.text);
          // The 400 points at something the client sent (or at the body as a whole).
          if (error.param !== null) expect(String(error.param).split(/[.[]/)[0]).toMatch(new RegExp(`^(${FIELDS.join('|')})$`));
        }
      }),
      settings(200, 8000),
    );
  });

  it('huge strings in any string field', async () => {
    const huge = fc.tuple(
      fc.constantFrom('model', 'input', 'instructions', 'user', 'previous_response_id', 'prompt_cache_key', 'tool_name', 'tool_description', 'metadata_value'),
      fc.integer({ min: 1_000, max: 200_000 }),
      fc.constantFrom('x', 'é', '😀', '\u0000', '"', '\\', '[[', ' '),
    );
    await fc.assert(
      fc.asyncProperty(huge, async ([field, size, unit]) => {
        const value = unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
        const body: Record<string, unknown> = { model: 'm', input: 'hi', store: false };
        if (field === 'tool_name') body.tools = [{ type: 'function', name: value }];
        else if (field === 'tool_description') body.tools = [{ type: 'function', name: 'f', description: value }];
        else if (field === 'metadata_value') body.metadata = { k: value };
        else body[field] = value;
        await checked(JSON.stringify(body));
      }),
      settings(30, 8000),
    );
  });

  it('deep nesting (up to 20k levels) in any position', async () => {
    const deep = fc.tuple(
      fc.integer({ min: 100, max: 20_000 }),
      fc.constantFrom('array', 'object'),
      fc.constantFrom('input', 'tools', 'metadata', 'text', 'tool_choice', 'reasoning', 'unknown_field', 'tool_parameters', 'content', 'top'),
    );
    await fc.assert(
      fc.asyncProperty(deep, async ([depth, shape, where]) => {
        const nested = shape === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
        const body =
          where === 'top'
            ? nested
            : where === 'tool_parameters'
              ? `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":${nested}}]}`
              : where === 'content'
                ? `{"model":"m","input":[{"role":"user","content":${nested}}]}`
                : `{"model":"m","input":"hi","${where}":${nested}}`;
        await checked(body);
      }),
      settings(40, 8000),
    );
  });

  it('unknown input item types and tool types', async () => {
    const name = fc.string({ minLength: 1, maxLength: 20 });
    const item = fc.oneof(
      fc.record({ type: name, id: fc.option(fc.string(), { nil: undefined }) }),
      fc.record(
        {
          type: fc.constantFrom(
            'message',
            'function_call',
            'function_call_output',
            'reasoning',
            'custom_tool_call',
            'mcp_approval_response',
            'item_reference',
            'compaction',
            'nap_call',
          ),
        },
        { requiredKeys: [] },
      ),
      fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
    );
    const tool = fc.oneof(
      fc.record({ type: name, name: fc.option(name, { nil: undefined }) }),
      fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(item, { maxLength: 4 }), fc.array(tool, { maxLength: 4 }), async (items, tools) => {
        await checked(JSON.stringify({ model: 'm', input: [{ role: 'user', content: 'hi' }, ...items], tools }));
      }),
      settings(200, 8000),
    );
  });

  it('invalid UTF-8 and other raw bytes, with odd content headers', async () => {
    const bytes = fc.uint8Array({ maxLength: 64 });
    const framing = fc.constantFrom('in-string', 'whole-body', 'after-body');
    const headers = fc.constantFrom<Record<string, string>>(
      {},
      { 'content-type': 'application/json; charset=latin1' },
      { 'content-type': 'application/json; charset=utf-16' },
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-encoding': 'gzip' },
      { 'content-encoding': 'br' },
    );
    await fc.assert(
      fc.asyncProperty(bytes, framing, headers, async (raw, frame, extra) => {
        const junk = Buffer.from(raw);
        const body =
          frame === 'in-string'
            ? Buffer.concat([Buffer.from('{"model":"m","stream":false,"input":"'), junk, Buffer.from('"}')])
            : frame === 'whole-body'
              ? junk
              : Buffer.concat([Buffer.from('{"model":"m","input":"hi"}'), junk]);
        await checked(body, extra);
      }),
      settings(200, 8000),
    );
  });

  it('bodies around and over the size limit: 413 in the envelope once over', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: BODY_LIMIT - 2048, max: BODY_LIMIT * 4 }), async (size) => {
        const prefix = '{"model":"m","store":false,"input":"';
        const body = prefix + 'y'.repeat(Math.max(0, size - prefix.length - 2)) + '"}';
        const res = await checked(body);
        if (Buffer.byteLength(body) > BODY_LIMIT) {
          expect(res.status).toBe(413);
          expect(JSON.parse(res.text).error.code).toBe('request_too_large');
        }
      }),
      settings(12, 8000),
    );
  });

  it('random tools arrays and tool_choice', async () => {
    const fnName = fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/);
    const schema = fc.oneof(
      fc.constant({ type: 'object', properties: {} }),
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({ type: fc.constantFrom('object', 'string', 'array', 'nope'), properties: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })) }),
    );
    // Weighted towards plausible declarations, so that many bodies get past validation into the loop.
    const tool = fc.oneof(
      { weight: 6, arbitrary: fc.record({ type: fc.constant('function'), name: fnName, parameters: fc.constant({ type: 'object', properties: { q: { type: 'string' } } }) }) },
      fc.record(
        {
          type: fc.constant('function'),
          name: fnName,
          description: fc.option(fc.string(), { nil: undefined }),
          parameters: schema,
          strict: fc.option(fc.boolean(), { nil: undefined }),
        },
        { requiredKeys: ['type'] },
      ),
      { weight: 3, arbitrary: fc.record({ type: fc.constant('nap'), name: fnName, parallel: fc.boolean() }) },
      fc.record({ type: fc.constant('nap'), name: fnName, parallel: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: ['type'] }),
      fc.record({ type: fc.constant('custom'), name: fnName, format: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: ['type'] }),
      fc.record(
        { type: fc.constant('namespace'), name: fnName, tools: fc.array(fc.record({ type: fc.constantFrom('function', 'custom', 'x'), name: fnName }), { maxLength: 3 }) },
        { requiredKeys: ['type'] },
      ),
      fc.record(
        {
          type: fc.constantFrom('mcp', 'web_search', 'web_search_preview', 'file_search', 'code_interpreter'),
          server_label: fc.string({ maxLength: 10 }),
          server_url: fc.constantFrom('http://127.0.0.1:9/mcp', 'not a url', 'file:///etc/passwd'),
          vector_store_ids: fc.jsonValue({ maxDepth: 1 }),
        },
        { requiredKeys: ['type'] },
      ),
      fc.jsonValue({ maxDepth: 2 }),
    );
    const choice = fc.oneof(
      fc.constantFrom('auto', 'none', 'required', 'sometimes'),
      fc.record({ type: fc.constantFrom('function', 'custom', 'allowed_tools', 'mcp'), name: fnName }),
      fc.jsonValue({ maxDepth: 2 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(tool, { maxLength: 6 }), fc.option(choice, { nil: undefined }), fc.boolean(), async (tools, tool_choice, stream) => {
        await checked(JSON.stringify({ model: 'm', input: 'What is the weather?', tools, tool_choice, stream, store: false }));
      }),
      settings(150, 8000),
    );
  });
});
