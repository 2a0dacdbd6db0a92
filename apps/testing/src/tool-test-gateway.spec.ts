import { Injectable, Module } from '@nestjs/common';
import {
  type ArgumentStream,
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

/** Shows its call while the model writes it: the `text` argument streams into the item. */
const NOTE = toolType<null>('note');

@Injectable()
@ToolHandlerProvider({ type: NOTE })
class NoteHandler implements ToolHandler<null, unknown, null> {
  readonly type = NOTE;
  validate(): null {
    return null;
  }
  normalize(): NormalizedTool<null>[] {
    return [{ fn: { type: 'function', name: 'note', parameters: { type: 'object', properties: { text: { type: 'string' } } } }, toolName: 'note', executionParams: null }];
  }
}

@Injectable()
@GatewayExecutorProvider({ type: NOTE })
class NoteExecutor implements GatewayExecutor<null> {
  readonly type = NOTE;
  async execute(): Promise<ToolOutput> {
    return { text: 'noted' };
  }
  streamArguments(): ArgumentStream {
    return { field: 'text', opening: [], delta: 'response.note_call_text.delta', done: 'response.note_call_text.done' };
  }
}

@Module({ providers: [NoteHandler, NoteExecutor] })
class NoteModule {}

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

describe('a tool type whose arguments stream', () => {
  let gateway: ToolTestGateway;
  beforeAll(async () => {
    gateway = await ToolTestGateway.start({ toolModules: [NoteModule] });
  });
  afterAll(() => gateway.close());

  it('gets its deltas while the model writes, then one done event with the whole text, then the call runs', async () => {
    const text = 'a note long enough to arrive in several pieces';
    const events = await gateway.stream({ input: `Note it [[call note ${JSON.stringify({ text })}]]`, tools: [{ type: 'note' }] });
    const ofCall = events.filter(
      (e) => e.type.startsWith('response.note_call') || (e.type.startsWith('response.output_item.') && (e.item as { type: string }).type === 'note_call'),
    );
    const types = ofCall.map((e) => e.type).filter((t, i, all) => t !== 'response.note_call_text.delta' || all[i - 1] !== t);
    expect(types).toEqual([
      'response.output_item.added',
      'response.note_call_text.delta',
      'response.note_call_text.done',
      'response.note_call.in_progress',
      'response.note_call.completed',
      'response.output_item.done',
    ]);
    const deltas = ofCall.filter((e) => e.type === 'response.note_call_text.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e.delta).join('')).toBe(text);
    expect(ofCall.find((e) => e.type === 'response.note_call_text.done')).toMatchObject({ text, item_id: ofCall[0].item && (ofCall[0].item as { id: string }).id });
  });
});
