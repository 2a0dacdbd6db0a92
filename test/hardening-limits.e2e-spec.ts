import { NapToolModule, napLedger } from '#core/testing/nap-tool.module.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * The per-request ceiling on gateway tool calls across rounds (finding 10):
 * a model that keeps calling gateway tools runs at most
 * `tools.maxGatewayCallsPerRequest` of them, whatever the round budget.
 */
describe('gateway calls per request (tools.maxGatewayCallsPerRequest)', () => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack({ imports: [NapToolModule], config: { tools: { maxRounds: 100, maxGatewayCallsPerRequest: 7 } } });
  });
  afterAll(() => stack.close());
  beforeEach(() => napLedger.reset());

  const body = (extra: Record<string, unknown> = {}) => ({
    model: 'm',
    // Three parallel calls in every round, for as many rounds as allowed.
    input: '[[always nap_a {"ms": 1, "tag": "a"}]] [[always nap_a {"ms": 1, "tag": "b"}]] [[always nap_a {"ms": 1, "tag": "c"}]]',
    tools: [{ type: 'nap', name: 'nap_a', parallel: true }],
    store: false,
    ...extra,
  });

  it('runs no more than the ceiling across rounds, tells the model why, and ends the loop', async () => {
    const response = (await stack.openai.responses.create(body() as any)) as any;
    expect(napLedger.records).toHaveLength(7);
    expect(response.output.filter((i: any) => i.type === 'nap_call')).toHaveLength(7);
    const rounds = stack.simulator.requests
      .filter((r) => (r.body as any).input !== undefined)
      .slice(-4)
      .map((r) => r.body as any);
    const last = rounds.at(-1);
    // The last round has no tools to call, and the model saw why the extra calls did not run.
    expect(last.tool_choice).toBe('none');
    expect(JSON.stringify(last.input)).toContain('gateway_call_limit');
    expect(response.status).toBe('completed');
  });

  it('a lower max_tool_calls in the request still wins', async () => {
    const response = (await stack.openai.responses.create(body({ max_tool_calls: 2 }) as any)) as any;
    expect(napLedger.records).toHaveLength(2);
    expect(response.output.filter((i: any) => i.type === 'nap_call')).toHaveLength(2);
  });
});
