import { NapToolModule, napLedger } from '#core/testing/nap-tool.module.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * The tool-type contract end to end with a module core has never heard of:
 * the test-only `nap` type brings its own approval policy, its own
 * `tool_choice` forms (and an alias) and its own history items, through the
 * HTTP gateway and the simulated upstream, with no line of core naming it.
 */
const nap = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'nap', name, ...extra }) as any;

describe('a tool module outside core gets what the built-in ones get (nap)', () => {
  let stack: GatewayStack;

  beforeAll(async () => {
    stack = await startStack({ imports: [NapToolModule] });
  });
  afterAll(() => stack?.close());
  beforeEach(() => napLedger.reset());

  const inferences = () => stack.simulator.requests.filter((r) => r.path === '/v1/responses');
  /** The model-side body of the last inference the gateway made. */
  const lastInference = () => inferences().at(-1)!.body as any;

  describe('approval policy', () => {
    it('a call that needs approval becomes a nap_approval_request and does not run', async () => {
      const response = await stack.openai.responses.create({
        model: 'm',
        input: 'Nap when allowed. [[call nap_a {"ms": 1, "tag": "wait"}]]',
        tools: [nap('nap_a', { require_approval: true })],
      });
      expect(response.status).toBe('completed');
      expect(response.output).toEqual([
        expect.objectContaining({ type: 'nap_approval_request', id: expect.stringMatching(/^napr_/), name: 'nap_a', arguments: '{"ms": 1, "tag": "wait"}' }),
      ]);
      expect(napLedger.records).toHaveLength(0);
    });

    it('an approval runs the call at the start of the next turn; the model reads its output in place of the request', async () => {
      const asked = await stack.openai.responses.create({
        model: 'm',
        input: 'Nap when allowed. [[call nap_a {"ms": 1, "tag": "approved"}]]',
        tools: [nap('nap_a', { require_approval: true })],
      });
      const request = asked.output[0] as any;
      const resumed = await stack.openai.responses.create({
        model: 'm',
        previous_response_id: asked.id,
        input: [{ type: 'nap_approval_response', approval_request_id: request.id, approve: true }] as any,
        tools: [nap('nap_a', { require_approval: true })],
      });
      expect(resumed.status).toBe('completed');
      expect((resumed.output as any[]).map((i) => i.type)).toEqual(['nap_call', 'message']);
      expect(resumed.output[0]).toMatchObject({ status: 'completed', approval_request_id: request.id, output: 'slept 1ms approved' });
      expect(napLedger.records.map((r) => r.tag)).toEqual(['approved']);
      const modelInput = lastInference().input as any[];
      const call = modelInput.findIndex((i) => i.type === 'function_call' && i.call_id === request.id);
      expect(call).toBeGreaterThan(-1);
      expect(modelInput[call + 1]).toMatchObject({ type: 'function_call_output', call_id: request.id, output: 'slept 1ms approved' });
    });

    it('a denial tells the model so and runs nothing', async () => {
      const asked = await stack.openai.responses.create({
        model: 'm',
        input: 'Nap when allowed. [[call nap_a {"ms": 1, "tag": "denied"}]]',
        tools: [nap('nap_a', { require_approval: true })],
      });
      const request = asked.output[0] as any;
      const resumed = await stack.openai.responses.create({
        model: 'm',
        previous_response_id: asked.id,
        input: [{ type: 'nap_approval_response', approval_request_id: request.id, approve: false, reason: 'not now' }] as any,
        tools: [nap('nap_a', { require_approval: true })],
      });
      expect((resumed.output as any[]).map((i) => i.type)).toEqual(['message']);
      expect(napLedger.records).toHaveLength(0);
      const output = (lastInference().input as any[]).find((i) => i.type === 'function_call_output' && i.call_id === request.id);
      expect(JSON.parse(output.output).error).toEqual({ code: 'approval_denied', message: 'The user denied this call. Reason: not now' });
    });

    it('an answer to a request the conversation does not hold is a 400 from the module', async () => {
      await expect(
        stack.openai.responses.create({
          model: 'm',
          input: [{ type: 'nap_approval_response', approval_request_id: 'napr_nowhere', approve: true }] as any,
          tools: [nap('nap_a', { require_approval: true })],
        }),
      ).rejects.toMatchObject({ status: 400, code: 'approval_request_not_found' });
      expect(napLedger.records).toHaveLength(0);
    });
  });

  describe('tool_choice', () => {
    it('{type: "nap", name} forces that nap, by its model-visible name', async () => {
      const before = inferences().length;
      await stack.openai.responses.create({
        model: 'm',
        input: 'Say hi.',
        tools: [nap('nap_a'), nap('nap_b')],
        tool_choice: { type: 'nap', name: 'nap_b' } as any,
      });
      // The first round is forced; the ones answering the forced call are not.
      expect(inferences()[before].body).toMatchObject({ tool_choice: { type: 'function', name: 'nap_b' } });
    });

    it('the alias {type: "siesta"} forces the first nap, and naming none declared is a 400 naming tool_choice', async () => {
      const before = inferences().length;
      await stack.openai.responses.create({ model: 'm', input: 'Say hi.', tools: [nap('nap_a'), nap('nap_b')], tool_choice: { type: 'siesta' } as any });
      expect(inferences()[before].body).toMatchObject({ tool_choice: { type: 'function', name: 'nap_a' } });
      await expect(
        stack.openai.responses.create({ model: 'm', input: 'Say hi.', tools: [nap('nap_a')], tool_choice: { type: 'nap', name: 'nap_z' } as any }),
      ).rejects.toMatchObject({ status: 400, param: 'tool_choice' });
    });
  });

  describe('history replay', () => {
    it('nap items sent back by the client reach the model as the calls and outputs they were', async () => {
      const first = await stack.openai.responses.create({
        model: 'm',
        input: 'Nap. [[call nap_a {"ms": 1, "tag": "earlier"}]]',
        tools: [nap('nap_a')],
        store: false,
      });
      const napItem = first.output[0] as any;
      expect(napItem).toMatchObject({ type: 'nap_call', status: 'completed' });
      await stack.openai.responses.create({
        model: 'm',
        input: [{ role: 'user', content: 'Nap. [[call nap_a {"ms": 1, "tag": "earlier"}]]' }, ...(first.output as any[]), { role: 'user', content: 'And now?' }] as any,
        tools: [nap('nap_a')],
        store: false,
      });
      const modelInput = lastInference().input as any[];
      expect(modelInput.filter((i) => i.type !== 'message')).toEqual([
        expect.objectContaining({ type: 'function_call', call_id: napItem.id, name: 'nap_a', arguments: '{"ms": 1, "tag": "earlier"}' }),
        expect.objectContaining({ type: 'function_call_output', call_id: napItem.id, output: 'slept 1ms earlier' }),
      ]);
      // Replayed, not run again.
      expect(napLedger.records.map((r) => r.tag)).toEqual(['earlier']);
    });
  });
});
