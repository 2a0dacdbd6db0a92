import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { FrameSocket } from './support/hardening/socket-frames.js';
import { rawPost } from './support/robustness/raw-http.js';

/**
 * Any JSON object key is data (finding 3): keys named like Object.prototype
 * members never reach a code path that treats them as anything else, over
 * HTTP and WebSocket.
 */
const PROTO_KEYS = ['constructor', '__proto__', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

/** Bodies with the key in every place a client object goes. */
function bodiesWith(key: string): Array<{ where: string; body: string }> {
  const o = (inner: string) => `{"${key}":${inner}}`;
  const base = '"model":"m","store":false';
  return [
    { where: 'top level', body: `{${base},"input":"[[say ok]]","${key}":"y"}` },
    { where: 'metadata', body: `{${base},"input":"[[say ok]]","metadata":${o('"y"')}}` },
    { where: 'text', body: `{${base},"input":"[[say ok]]","text":${o('{"a":1}')}}` },
    { where: 'reasoning', body: `{${base},"input":"[[say ok]]","reasoning":${o('"y"')}}` },
    { where: 'stream_options', body: `{${base},"stream":true,"input":"[[say ok]]","stream_options":${o('true')}}` },
    {
      where: 'tool schema property',
      body: `{${base},"input":"[[say ok]]","tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":${o('{"type":"string"}')}}}]}`,
    },
    { where: 'tool declaration', body: `{${base},"input":"[[say ok]]","tools":[{"type":"function","name":"f","${key}":1}]}` },
    { where: 'input item', body: `{${base},"input":[{"type":"message","role":"user","content":"[[say ok]]","${key}":{"a":1}}]}` },
    { where: 'input content part', body: `{${base},"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"[[say ok]]","${key}":"x"}]}]}` },
    { where: 'mcp headers', body: `{${base},"input":"[[say ok]]","tools":[{"type":"mcp","server_label":"s","server_url":"http://127.0.0.1:9/mcp","headers":${o('"v"')}}]}` },
    { where: 'tool_choice', body: `{${base},"input":"[[say ok]]","tool_choice":${o('"auto"')}}` },
  ];
}

describe('object keys named like prototype members are data', () => {
  let stack: GatewayStack;
  let base: string;
  beforeAll(async () => {
    stack = await startStack();
    base = stack.url.replace(/\/v1$/, '');
  });
  afterAll(() => stack.close());

  const cases = PROTO_KEYS.flatMap((key) => bodiesWith(key).map((c) => ({ key, ...c })));

  it.each(cases)('HTTP: "$key" in $where is a 200 or a 4xx in the envelope', async ({ body }) => {
    const res = await rawPost(`${stack.url}/responses`, body);
    expect(res.status).toBeLessThan(500);
    if (res.status !== 200) {
      const { error } = JSON.parse(res.text);
      expect(error).toMatchObject({ type: 'invalid_request_error' });
      expect(error.code).not.toBe('internal_error');
    }
  });

  it('keeps metadata keys named constructor as data, echoed back as sent', async () => {
    const res = await rawPost(`${stack.url}/responses`, '{"model":"m","input":"[[say ok]]","metadata":{"constructor":"y","__proto__":"z"}}');
    expect(res.status).toBe(200);
    const response = JSON.parse(res.text);
    expect(Object.getOwnPropertyNames(response.metadata).sort()).toEqual(['__proto__', 'constructor']);
    expect(response.metadata.constructor).toBe('y');
    const stored = JSON.parse((await rawGet(`${stack.url}/responses/${response.id}`)).text);
    expect(stored.metadata.constructor).toBe('y');
  });

  it('WebSocket: "constructor" anywhere gets response frames or an error frame, never internal_error', async () => {
    const socket = await FrameSocket.open(base);
    try {
      for (const { where, body } of bodiesWith('constructor')) {
        const parsed = JSON.parse(body);
        delete parsed.stream;
        delete parsed.stream_options;
        socket.send({ type: 'response.create', ...parsed });
        const frames = await socket.untilTerminal();
        const last = frames.at(-1);
        if (last.type === 'error') {
          expect({ where, status: last.status ?? 400 }).toEqual({ where, status: expect.any(Number) });
          expect(last.error.code).not.toBe('internal_error');
          expect(last.status ?? 400).toBeLessThan(500);
        } else {
          expect({ where, type: last.type }).toEqual({ where, type: 'response.completed' });
        }
      }
    } finally {
      await socket.close();
    }
  });
});

function rawGet(url: string) {
  return import('./support/hardening/growth.js').then(({ get }) => get(url));
}
