import http from 'node:http';
import fc from 'fast-check';
import { NapToolModule } from '#core/testing/nap-tool.module.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { FrameSocket } from './support/hardening/socket-frames.js';
import { rawRequest, type RawAnswer } from './support/hardening/raw-request.js';

/**
 * Seeded property-based fuzzing of every route and of WebSocket frames, over
 * real sockets: client input never gets a 5xx, every refusal is in the
 * surface's error envelope, and the gateway keeps serving. The seed is fixed
 * so that a run is the same run everywhere; `FUZZ_SEED=<n>` explores others.
 */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 1111;
/** Bounded in runs and in time: on a busy machine fewer of the same seeded runs happen, never different ones. */
const settings = (numRuns: number) => ({ numRuns, seed: SEED, endOnFailure: true, interruptAfterTimeLimit: 60_000 });
const BODY_LIMIT = 64 * 1024;

/** Keys that once reached code which treated them as something other than data. */
const HOSTILE_KEYS = ['constructor', '__proto__', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'then', 'toJSON', 'length'];

const key = fc.oneof(
  fc.constantFrom(...HOSTILE_KEYS),
  fc.string({ maxLength: 12 }),
  fc.constantFrom('model', 'input', 'tools', 'metadata', 'items', 'type', 'role', 'content', 'id'),
);
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 20 }),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** Bodies weighted towards plausible ones, so that many get past the first checks. */
function bodyFor(kind: 'responses' | 'conversation' | 'items' | 'messages' | 'compact' | 'any'): fc.Arbitrary<unknown> {
  const item = fc.oneof(
    fc.record(
      { type: fc.constant('message'), role: fc.constantFrom('user', 'assistant', 'system', 'developer', 'x'), content: fc.oneof(fc.string({ maxLength: 20 }), json) },
      { requiredKeys: ['type'] },
    ),
    fc.dictionary(key, json, { maxKeys: 5 }),
  );
  const plausible: Record<string, fc.Arbitrary<unknown>> = {
    responses: fc.record(
      {
        model: fc.oneof(fc.constant('m'), json),
        input: fc.oneof(fc.constant('[[say fuzz]]'), fc.array(item, { maxLength: 3 }), json),
        tools: fc.oneof(
          fc.array(fc.record({ type: fc.constantFrom('function', 'nap', 'custom', 'namespace', 'mcp', 'web_search'), name: fc.stringMatching(/^[a-z_]{1,8}$/) }), { maxLength: 3 }),
          json,
        ),
        metadata: fc.oneof(fc.dictionary(key, fc.string({ maxLength: 10 }), { maxKeys: 4 }), json),
        text: json,
        reasoning: json,
        store: fc.oneof(fc.boolean(), json),
        stream: fc.boolean(),
        previous_response_id: fc.oneof(fc.constant('resp_missing'), json),
      },
      { requiredKeys: [] },
    ),
    conversation: fc.record(
      { items: fc.oneof(fc.array(item, { maxLength: 3 }), json), metadata: fc.oneof(fc.dictionary(key, fc.string({ maxLength: 10 }), { maxKeys: 4 }), json) },
      { requiredKeys: [] },
    ),
    items: fc.record({ items: fc.oneof(fc.array(item, { maxLength: 3 }), json) }, { requiredKeys: [] }),
    messages: fc.record(
      {
        model: fc.oneof(fc.constant('m'), json),
        max_tokens: fc.oneof(fc.integer({ min: 1, max: 64 }), json),
        messages: fc.oneof(fc.array(fc.record({ role: fc.constantFrom('user', 'assistant', 'x'), content: fc.oneof(fc.constant('[[say hi]]'), json) }), { maxLength: 3 }), json),
        tools: json,
        stream: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
    compact: fc.record({ model: fc.oneof(fc.constant('m'), json), input: fc.oneof(fc.constant('hello'), json), previous_response_id: json }, { requiredKeys: [] }),
    any: json,
  };
  return fc.oneof({ weight: 3, arbitrary: plausible[kind] }, { weight: 1, arbitrary: json }, { weight: 1, arbitrary: fc.dictionary(key, json, { maxKeys: 8 }) });
}

interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: 'responses' | 'conversation' | 'items' | 'messages' | 'compact' | 'any';
}

/** Every route the gateway serves; `{id}` and `{item}` are filled with known, unknown and odd ids. */
const ROUTES: Route[] = [
  { method: 'POST', path: '/v1/responses', body: 'responses' },
  { method: 'GET', path: '/v1/responses/{id}' },
  { method: 'DELETE', path: '/v1/responses/{id}' },
  { method: 'GET', path: '/v1/responses/{id}/input_items' },
  { method: 'POST', path: '/v1/responses/compact', body: 'compact' },
  { method: 'POST', path: '/v1/conversations', body: 'conversation' },
  { method: 'GET', path: '/v1/conversations/{conv}' },
  { method: 'POST', path: '/v1/conversations/{conv}', body: 'conversation' },
  { method: 'DELETE', path: '/v1/conversations/{conv}' },
  { method: 'GET', path: '/v1/conversations/{conv}/items' },
  { method: 'POST', path: '/v1/conversations/{conv}/items', body: 'items' },
  { method: 'GET', path: '/v1/conversations/{conv}/items/{item}' },
  { method: 'DELETE', path: '/v1/conversations/{conv}/items/{item}' },
  { method: 'POST', path: '/v1/messages', body: 'messages' },
  { method: 'GET', path: '/v1/models' },
  { method: 'GET', path: '/health' },
  { method: 'GET', path: '/ready' },
  { method: 'POST', path: '/v1/unknown', body: 'any' },
  { method: 'GET', path: '/v1/responses/{id}/unknown' },
];

describe('fuzzing every route and WebSocket frames (fast-check, seeded, real sockets)', () => {
  let stack: GatewayStack;
  let origin: string;
  let agent: http.Agent;
  const known = { id: '', conv: '', item: '' };

  beforeAll(async () => {
    stack = await startStack({ imports: [NapToolModule], config: { server: { bodyLimitBytes: BODY_LIMIT } } });
    origin = stack.url.replace(/\/v1$/, '');
    agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const stored = JSON.parse((await rawRequest(origin, 'POST', '/v1/responses', JSON.stringify({ model: 'm', input: '[[say stored]]' }))).text);
    known.id = stored.id;
    const conv = JSON.parse((await rawRequest(origin, 'POST', '/v1/conversations', JSON.stringify({ items: [{ type: 'message', role: 'user', content: 'hi' }] }))).text);
    known.conv = conv.id;
    const items = JSON.parse((await rawRequest(origin, 'GET', `/v1/conversations/${conv.id}/items`)).text);
    known.item = items.data[0].id;
  });
  afterAll(async () => {
    agent.destroy();
    await stack.close();
  });
  afterEach(async () => {
    // Still serving: a good request answers after every batch.
    const ok = await rawRequest(origin, 'POST', '/v1/responses', JSON.stringify({ model: 'm', input: '[[say still serving]]', store: false }));
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text).output.at(-1).content[0].text).toBe('still serving');
  });

  /** The property every HTTP answer must have. */
  function assertWellFormed(res: RawAnswer, route: Route, sent: string): void {
    const show = () => `${route.method} ${route.path} ${sent.slice(0, 300)}\n→ HTTP ${res.status} ${res.text.slice(0, 400)}`;
    if (res.status >= 500) throw new Error(`5xx for client input: ${show()}`);
    const type = String(res.headers['content-type'] ?? '');
    if (type.includes('text/event-stream')) {
      if (/"code":"(internal_error|server_error)"/.test(res.text)) throw new Error(`internal failure mid-stream: ${show()}`);
      return;
    }
    let parsed: any;
    try {
      parsed = JSON.parse(res.text);
    } catch {
      throw new Error(`answer is not JSON: ${show()}`);
    }
    if (res.status < 400) return;
    const anthropic = route.path.startsWith('/v1/messages');
    const error = parsed?.error;
    const ok = anthropic
      ? parsed?.type === 'error' && typeof error?.type === 'string' && typeof error?.message === 'string' && error.message.length > 0
      : typeof error?.message === 'string' && error.message.length > 0 && typeof error.type === 'string' && 'param' in error && 'code' in error;
    if (!ok) throw new Error(`refusal without the error envelope: ${show()}`);
  }

  const idText = fc.oneof(
    fc.constant('known'),
    fc.constant('known'),
    fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s)),
    fc.constantFrom('constructor', '__proto__', '%00', '..', '%2e%2e%2f', 'a'.repeat(300), 'resp_%ZZ'),
  );
  const query = fc.oneof(
    fc.constant(''),
    fc
      .dictionary(
        fc.constantFrom('limit', 'order', 'after', 'before', 'include[]', 'stream', 'constructor', '__proto__'),
        fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('1', '100', '101', '-1', 'asc', 'desc', 'true')),
        { maxKeys: 3 },
      )
      .map(
        (q) =>
          '?' +
          Object.entries(q)
            .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
            .join('&'),
      ),
    fc.constantFrom('?limit=1&limit=2', '?order[]=asc', '?a[b][c]=1', '?__proto__[x]=1'),
  );

  it('HTTP: every route, any ids, query and body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom(...ROUTES)
          .chain((route) => fc.tuple(fc.constant(route), idText, idText, idText, query, route.body ? bodyFor(route.body) : fc.constant(undefined), fc.boolean())),
        async ([route, id, conv, item, q, body, raw]) => {
          const fill = (value: string, which: keyof typeof known) => (value === 'known' ? known[which] : value);
          const path = route.path.replace('{id}', fill(id, 'id')).replace('{conv}', fill(conv, 'conv')).replace('{item}', fill(item, 'item')) + q;
          // Deletes of the known ids would starve later runs of existing objects.
          if (route.method === 'DELETE' && (path.includes(known.id) || path.includes(known.conv))) return;
          let sent = body === undefined ? '' : JSON.stringify(body);
          if (raw && sent.length > 2) sent = sent.slice(0, Math.floor(sent.length / 2));
          const res = await rawRequest(origin, route.method, path, route.body ? sent || '{}' : undefined, {}, agent);
          assertWellFormed(res, route, sent);
        },
      ),
      settings(300),
    );
  }, 120_000);

  it('WebSocket: any frames get events or error frames, and the socket keeps serving', async () => {
    const socket = await FrameSocket.open(origin);
    const frame = fc.oneof(
      { weight: 3, arbitrary: bodyFor('responses').map((b) => ({ type: 'response.create', ...(b && typeof b === 'object' && !Array.isArray(b) ? b : { input: b }) })) },
      { weight: 1, arbitrary: fc.record({ type: fc.oneof(fc.string({ maxLength: 20 }), json) }) },
      { weight: 1, arbitrary: json },
      { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((s) => ({ raw: s })) },
    );
    try {
      await fc.assert(
        fc.asyncProperty(frame, async (f) => {
          const isRaw = f && typeof f === 'object' && 'raw' in (f as object) && Object.keys(f as object).length === 1;
          const text = isRaw ? String((f as { raw: string }).raw) : JSON.stringify(f);
          socket.send(text);
          const frames = await socket.untilTerminal(10_000);
          for (const got of frames) {
            if (got.type === 'error') {
              if (!(got.status >= 400 && got.status < 500)) throw new Error(`error frame with status ${got.status} for ${text.slice(0, 200)}: ${JSON.stringify(got)}`);
              if (typeof got.error?.message !== 'string' || typeof got.error?.type !== 'string') throw new Error(`error frame without the envelope: ${JSON.stringify(got)}`);
            }
            if (got.type === 'response.failed' && /internal_error|server_error/.test(JSON.stringify(got.response?.error ?? {}))) {
              throw new Error(`internal failure for ${text.slice(0, 200)}`);
            }
          }
        }),
        settings(200),
      );
      expect(socket.closed).toBe(false);
      socket.send({ type: 'response.create', model: 'm', input: '[[say socket fine]]', store: false });
      expect((await socket.untilTerminal()).at(-1)).toMatchObject({ type: 'response.completed' });
    } finally {
      await socket.close();
    }
  }, 120_000);
});
