import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { parseSse, startStack, type GatewayStack } from './support/gateway-harness.js';

/** The spec's own names only: an OpenAI-named reasoning event fails it. */
const specValidator = new OpenResponsesValidator({ reasoningEventStyle: 'openresponses' });
const INPUT = '[[reason Thinking it over.]] [[say Done.]]';

async function streamRaw(stack: GatewayStack, headers: Record<string, string> = {}): Promise<any[]> {
  const res = await fetch(`${stack.url}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'm', input: INPUT, stream: true, reasoning: { effort: 'medium' } }),
  });
  expect(res.status).toBe(200);
  return parseSse(await res.text()).map((e) => e.data);
}

/**
 * With the defaults and reasoning on, one gateway passes the Open Responses
 * validator for a client that does not declare itself an OpenAI SDK, and the
 * openai SDK's `responses.stream()` helper works: the event names follow
 * what the client declares, and the header and setting still decide when given.
 */
describe.each(['responses', 'chat'] as const)('reasoning event names by default (%s dialect)', (dialect) => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ dialect, simulator: { reasoning: true } });
  });
  afterAll(() => stack.close());

  it('a client that is no OpenAI SDK gets the spec names, every event valid', async () => {
    const events = await streamRaw(stack);
    events.forEach((e) => specValidator.assertEvent(e));
    const types = events.map((e) => e.type);
    expect(types).toContain('response.reasoning.delta');
    expect(types).not.toContain('response.reasoning_text.delta');
    expect(types.at(-1)).toBe('response.completed');
  });

  it("the openai SDK's responses.stream() helper works, with reasoning", async () => {
    const stream = stack.openai.responses.stream({ model: 'm', input: INPUT, reasoning: { effort: 'medium' } });
    const types: string[] = [];
    stream.on('event', (e) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Done.');
    expect(final.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    expect(types).toContain('response.reasoning_text.delta');
  });

  it('Codex (by its User-Agent) and Stainless-built SDKs get the OpenAI names; the header still overrides', async () => {
    const codex = (await streamRaw(stack, { 'user-agent': 'codex_cli_rs/0.171.0 (Linux; x86_64)' })).map((e) => e.type);
    expect(codex).toContain('response.reasoning_text.delta');
    const python = (await streamRaw(stack, { 'user-agent': 'OpenAI/Python 1.99.0', 'x-stainless-lang': 'python' })).map((e) => e.type);
    expect(python).toContain('response.reasoning_text.delta');
    const browser = (await streamRaw(stack, { 'x-stainless-lang': 'js' })).map((e) => e.type);
    expect(browser).toContain('response.reasoning_text.delta');
    const chosen = (await streamRaw(stack, { 'user-agent': 'OpenAI/JS 6.49.0', 'x-switchyard-reasoning-events': 'openresponses' })).map((e) => e.type);
    expect(chosen).toContain('response.reasoning.delta');
    expect(chosen).not.toContain('response.reasoning_text.delta');
  });
});

describe('reasoning event names fixed by the setting', () => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ simulator: { reasoning: true }, config: { server: { reasoningEvents: 'openai' } } });
  });
  afterAll(() => stack.close());

  it('server.reasoningEvents=openai names every client the OpenAI way', async () => {
    const types = (await streamRaw(stack)).map((e) => e.type);
    expect(types).toContain('response.reasoning_text.delta');
  });
});
