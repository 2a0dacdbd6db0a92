import { Injectable, Module } from '@nestjs/common';
import {
  type DiscoveryContext,
  type DiscoveryResult,
  type ExecutionContext,
  type GatewayExecutor,
  GatewayExecutorProvider,
  type NormalizedTool,
  RequestLocal,
  type ToolHandler,
  ToolHandlerProvider,
  type ToolOutput,
  toolType,
} from 'switchyard-gateway';
import { ToolTestGateway } from './tool-test-gateway.js';

/** What one request's stages of the `tally` type note down: every declaration discovered, in order. */
const NOTES = new RequestLocal<{ requestId: string; discovered: string[] }>('tally.notes', () => ({ requestId: '', discovered: [] }));
const TALLY = toolType<{ label: string }>('tally');

/** Each declaration's discovery notes its label in the request's state; the call reports what that state holds. */
@Injectable()
@ToolHandlerProvider({ type: TALLY })
class TallyHandler implements ToolHandler<{ label: string }, null, { label: string }> {
  readonly type = TALLY;
  validate(declaration: Record<string, unknown>): { label: string } {
    return { label: String(declaration.label) };
  }
  async discover(params: { label: string }, ctx: DiscoveryContext): Promise<DiscoveryResult<null>> {
    const notes = ctx.request.local(NOTES);
    notes.requestId = ctx.request.requestId;
    notes.discovered.push(params.label);
    return { state: null };
  }
  normalize(params: { label: string }): NormalizedTool<{ label: string }>[] {
    return [
      { fn: { type: 'function', name: `tally_${params.label}`, parameters: { type: 'object', properties: {} } }, toolName: `tally_${params.label}`, executionParams: params },
    ];
  }
}

@Injectable()
@GatewayExecutorProvider({ type: TALLY })
class TallyExecutor implements GatewayExecutor<{ label: string }> {
  readonly type = TALLY;
  async execute(_call: unknown, params: { label: string }, ctx: ExecutionContext): Promise<ToolOutput> {
    const notes = ctx.request.local(NOTES);
    return { text: `${params.label}: ${notes.discovered.join(',')} in ${notes.requestId === ctx.requestId ? 'this request' : notes.requestId || 'no request'}` };
  }
}

@Module({ providers: [TallyHandler, TallyExecutor] })
class TallyModule {}

describe('ToolTestGateway, and the request context a tool type is given', () => {
  let gateway: ToolTestGateway;
  beforeAll(async () => {
    gateway = await ToolTestGateway.start({ toolModules: [TallyModule] });
  });
  afterAll(() => gateway.close());

  it("hands discover and execute one request's context, and each request its own", async () => {
    const tools = [
      { type: 'tally', label: 'a' },
      { type: 'tally', label: 'b' },
    ];
    for (let i = 0; i < 2; i++) {
      const { status, body } = await gateway.create({ input: 'Count [[call tally_b {}]]', tools });
      expect(status).toBe(200);
      // Both declarations' discoveries, and no more: the second request starts from nothing.
      expect(body.output[0]).toMatchObject({ type: 'tally_call', status: 'completed', output: 'b: a,b in this request' });
    }
    expect(gateway.upstream.requests.length).toBe(4);
  });
});
