import { TOOL_STORAGE } from '#tool-sdk/ports/tool-storage.js';
import { parseStorageSettings } from '#storage/config/storage.config-section.js';
import { toolStorage } from '#storage/tool-storage.js';
import { NEVER, Observable, concat, from, lastValueFrom, of, throwError, toArray } from 'rxjs';
import { CustomToolModule } from '#tools/custom/custom-tool.module.js';
import { FileSearchToolModule } from '#tools/file-search/file-search-tool.module.js';
import { FunctionToolModule } from '#tools/function/function-tool.module.js';
import { NamespaceToolModule } from '#tools/namespace/namespace-tool.module.js';
import { UpstreamUnavailableError } from '#tool-sdk/errors.js';
import type { ToolOutput } from '#tool-sdk/contract/index.js';
import type { JsonObject, PublicItem } from '#tool-sdk/items.js';
import type { ModelEvent } from '../protocol/model-events.js';
import { flush, until } from '../testing/deferred.js';
import { callEvents, finished, messageEvents, responseRequest, usageEvent } from '../testing/fixtures.js';
import { createLoopHarness, RecordingStateStore, type LoopHarness } from '../testing/loop-harness.js';
import { ProbeExecutor, ProbeToolModule } from '../testing/probe-tool.js';
import { ScriptedUpstreamClient, type ScriptedRound } from '../testing/scripted-upstream.client.js';
import type { ResponseRequest } from './response-request.js';
import type { ResponseStreamEvent } from './response-events.js';

const fn = (name: string): JsonObject => ({ type: 'function', name, parameters: { type: 'object', properties: { x: { type: 'integer' } } } });
const probe = (name: string, extra: JsonObject = {}): JsonObject => ({ type: 'probe', name, ...extra });

/** A tool call the probe executor never answers; it only notes that it was cancelled. */
const hang = (): Promise<ToolOutput> => new Promise<ToolOutput>(() => undefined);

describe('LoopService / ResponseRun (real core, scripted upstream, no HTTP)', () => {
  let harness: LoopHarness | undefined;
  let upstream: ScriptedUpstreamClient;
  let executor: ProbeExecutor;
  let state: RecordingStateStore;

  async function setUp(rounds: ScriptedRound[] | ((round: number) => ScriptedRound), config: Record<string, unknown> = {}, prior: RecordingStateStore = new RecordingStateStore()) {
    upstream = new ScriptedUpstreamClient(rounds);
    harness = await createLoopHarness({
      upstream,
      config,
      toolModules: [FunctionToolModule, CustomToolModule, NamespaceToolModule, FileSearchToolModule, ProbeToolModule],
      // File search keeps its index where the gateway's storage says: here, in memory.
      providers: [{ provide: TOOL_STORAGE, useValue: toolStorage(parseStorageSettings({ driver: 'memory' })) }],
    });
    executor = harness.moduleRef.get(ProbeExecutor);
    state = prior;
  }

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  const run = (request: Partial<ResponseRequest>): Promise<ResponseStreamEvent[]> => lastValueFrom(harness!.loop.run(responseRequest(request), { state }).pipe(toArray()));

  const responseOf = (events: ResponseStreamEvent[]) => events[events.length - 1].response as Record<string, any>;
  const outputTypes = (events: ResponseStreamEvent[]) => (responseOf(events).output as PublicItem[]).map((i) => i.type);

  it('Done: a plain answer completes after one upstream call', async () => {
    await setUp([[...messageEvents('m', ['Hi ', 'there']), usageEvent(5, 2), finished]]);
    const events = await run({ tools: [fn('run_shell'), probe('lookup')] });

    expect(upstream.requests).toHaveLength(1);
    const [request] = upstream.requests;
    expect(request.input).toEqual([{ type: 'message', role: 'user', content: 'hello' }]);
    expect(request.tools.map((t) => t.name)).toEqual(['run_shell', 'lookup']);
    expect(request.tool_choice).toBe('auto');

    expect(events[0].type).toBe('response.created');
    expect(events[1].type).toBe('response.in_progress');
    expect(events[events.length - 1].type).toBe('response.completed');
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));

    const response = responseOf(events);
    expect(response).toMatchObject({ status: 'completed', incomplete_details: null, error: null });
    expect(response.output).toEqual([expect.objectContaining({ type: 'message', status: 'completed', content: [expect.objectContaining({ text: 'Hi there' })] })]);
    expect(response.usage).toMatchObject({ input_tokens: 5, output_tokens: 2, total_tokens: 7 });
    expect(response.tools.map((t: JsonObject) => t.type)).toEqual(['function', 'probe']);
    expect(typeof response.completed_at).toBe('number');
    expect(executor.calls).toHaveLength(0);
    expect(state.saved).toHaveLength(1);
    expect(state.saved[0].modelItems.map((i) => i.type)).toEqual(['message', 'message']);
  });

  it("annotates the answer from every round's completed calls, each round's results added to the earlier ones", async () => {
    await setUp([
      [...callEvents('c1', 'call_1', 'lookup', ['{"q":"a"}']), finished],
      [...callEvents('c2', 'call_2', 'lookup', ['{"q":"b"}']), finished],
      [...messageEvents('m', ['From a and b']), finished],
    ]);
    const seen: string[][] = [];
    executor.annotate = (_text, results) => {
      seen.push(results.map((r) => r.call.callId));
      return results.map((r, i) => ({ type: 'file_citation', file_id: r.call.callId, filename: `${r.call.callId}.md`, index: i }));
    };
    const events = await run({ tools: [probe('lookup')] });
    const message = (responseOf(events).output as any[]).find((item) => item.type === 'message');
    expect(message.content[0].annotations.map((a: JsonObject) => a.file_id)).toEqual(['call_1', 'call_2']);
    expect(seen).toEqual([['call_1', 'call_2']]);

    // A second response starts from nothing: the first one's results are not shared with it.
    await harness!.close();
    await setUp([
      [...callEvents('c3', 'call_3', 'lookup', ['{"q":"c"}']), finished],
      [...messageEvents('m', ['From c']), finished],
    ]);
    executor.annotate = (_text, results) => results.map((r) => ({ type: 'file_citation', file_id: r.call.callId, filename: 'c.md', index: 0 }));
    const again = await run({ tools: [probe('lookup')] });
    const second = (responseOf(again).output as any[]).find((item) => item.type === 'message');
    expect(second.content[0].annotations.map((a: JsonObject) => a.file_id)).toEqual(['call_3']);
  });

  it('RequiresClientAction: a mixed turn runs the gateway call and returns the client call in the same round', async () => {
    await setUp([[...callEvents('g', 'call_g', 'lookup', ['{"q":', '"a"}']), ...callEvents('c', 'call_c', 'run_shell', ['{"x":1}']), usageEvent(4, 3), finished]]);
    const events = await run({ tools: [probe('lookup'), fn('run_shell')] });

    expect(upstream.requests).toHaveLength(1);
    expect(executor.calls.map((c) => c.call)).toEqual([expect.objectContaining({ callId: 'call_g', modelName: 'lookup', toolName: 'lookup', arguments: '{"q":"a"}' })]);

    const response = responseOf(events);
    expect(response.status).toBe('completed');
    expect(outputTypes(events)).toEqual(['probe_call', 'function_call']);
    expect(response.output[0]).toMatchObject({ status: 'completed', output: 'probed lookup with {"q":"a"}' });
    expect(response.output[1]).toMatchObject({ call_id: 'call_c', name: 'run_shell', arguments: '{"x":1}', status: 'completed' });
    // The gateway call never surfaces as a function_call.
    expect(events.some((e) => (e.item as { call_id?: string } | undefined)?.call_id === 'call_g')).toBe(false);

    // Its public lifecycle, with the executor's planned events in between.
    const probeEvents = events.filter((e) => e.output_index === 0).map((e) => e.type);
    expect(probeEvents).toEqual(['response.output_item.added', 'response.probe_call.in_progress', 'response.probe_call.completed', 'response.output_item.done']);
    const probeId = response.output[0].id;
    expect(events.filter((e) => e.type.startsWith('response.probe_call.')).every((e) => e.item_id === probeId)).toBe(true);

    // The client gets the resolved gateway result with the pending call; both are on record for the next turn.
    expect(state.saved[0].modelItems).toEqual([
      { type: 'message', role: 'user', content: 'hello' },
      { type: 'function_call', call_id: 'call_g', name: 'lookup', arguments: '{"q":"a"}' },
      { type: 'function_call', call_id: 'call_c', name: 'run_shell', arguments: '{"x":1}' },
      { type: 'function_call_output', call_id: 'call_g', output: 'probed lookup with {"q":"a"}' },
    ]);
  });

  it('Continue then Done: gateway output goes back to the model, usage is summed over rounds', async () => {
    await setUp([
      [...callEvents('g', 'call_1', 'lookup', ['{"q":"x"}']), usageEvent(10, 4, 1, 2), finished],
      [...messageEvents('m', ['The answer']), usageEvent(20, 6, 3, 5), finished],
    ]);
    const events = await run({ tools: [probe('lookup')] });

    expect(upstream.requests).toHaveLength(2);
    expect(upstream.requests[0].input).toEqual([{ type: 'message', role: 'user', content: 'hello' }]);
    expect(upstream.requests[1].input).toEqual([
      { type: 'message', role: 'user', content: 'hello' },
      { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'probed lookup with {"q":"x"}' },
    ]);
    const response = responseOf(events);
    expect(response.status).toBe('completed');
    expect(outputTypes(events)).toEqual(['probe_call', 'message']);
    expect(response.usage).toEqual({
      input_tokens: 30,
      output_tokens: 10,
      total_tokens: 40,
      input_tokens_details: { cached_tokens: 7 },
      output_tokens_details: { reasoning_tokens: 4 },
    });
  });

  it("finishes a round's gateway calls in model order, a synchronous call at once, one that waits after the starts that came before it", async () => {
    await setUp([
      [
        ...callEvents('s1', 'call_s1', 'lookup', ['{"q":"now"}']),
        ...callEvents('a', 'call_a', 'lookup', ['{"q":"slow"}']),
        ...callEvents('s2', 'call_s2', 'lookup', ['{"q":"now"}']),
        finished,
      ],
      [...messageEvents('m', ['Done']), finished],
    ]);
    executor.behaviour = (call) =>
      call.arguments.includes('slow') ? new Promise<ToolOutput>((resolve) => setTimeout(() => resolve({ text: 'late' }), 20)) : of({ text: 'at once' });
    const events = await run({ tools: [probe('lookup', { parallel: true })] });
    const lifecycle = events
      .filter((e) => (e.type === 'response.output_item.added' || e.type === 'response.output_item.done') && (e.item as PublicItem).type === 'probe_call')
      .map((e) => `${e.type === 'response.output_item.added' ? 'start' : 'finish'} ${e.output_index}`);
    // The second synchronous call finished before the one that waits; its finish waits for that one's, in model order.
    expect(lifecycle).toEqual(['start 0', 'finish 0', 'start 1', 'start 2', 'finish 1', 'finish 2']);
    expect((responseOf(events).output as any[]).slice(0, 3).map((item) => item.output)).toEqual(['at once', 'late', 'at once']);
  });

  it('applies a forcing tool_choice to the first round only', async () => {
    await setUp([
      [...callEvents('g', 'call_1', 'lookup', ['{}']), finished],
      [...messageEvents('m', ['ok']), finished],
    ]);
    await run({ tools: [probe('lookup')], toolChoice: { type: 'function', name: 'lookup' } });
    expect(upstream.requests.map((r) => r.tool_choice)).toEqual([{ type: 'function', name: 'lookup' }, 'auto']);
  });

  it('Incomplete: stops at maxRounds while the model still calls gateway tools', async () => {
    let n = 0;
    await setUp(() => [...callEvents('g', `call_${++n}`, 'lookup', ['{}']), finished], { tools: { maxRounds: 2 } });
    const events = await run({ tools: [probe('lookup')] });

    expect(upstream.requests).toHaveLength(2);
    expect(executor.calls).toHaveLength(2);
    expect(events[events.length - 1].type).toBe('response.incomplete');
    const response = responseOf(events);
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_rounds' });
    expect(outputTypes(events)).toEqual(['probe_call', 'probe_call']);
    expect(state.saved).toHaveLength(1);
  });

  it('an upstream that stops at its token limit ends the response incomplete at once', async () => {
    await setUp([[...messageEvents('m', ['Half an ans']), { type: 'finish', status: 'incomplete', reason: 'max_output_tokens' }]]);
    const events = await run({ tools: [probe('lookup')] });

    expect(upstream.requests).toHaveLength(1);
    expect(events[events.length - 1].type).toBe('response.incomplete');
    const response = responseOf(events);
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(response.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
    expect(response.completed_at).toBeNull();
  });

  it('RequiresClientAction through an approval request: the call does not run and its transcript entry is keyed by the request', async () => {
    await setUp([[...callEvents('g', 'call_a', 'srv__lookup', ['{"q":"rm"}']), finished]]);
    const events = await run({ tools: [probe('lookup', { server_label: 'srv', require_approval: true })] });

    expect(upstream.requests).toHaveLength(1);
    expect(executor.calls).toHaveLength(0);
    const response = responseOf(events);
    expect(response.status).toBe('completed');
    expect(response.output).toEqual([expect.objectContaining({ type: 'probe_approval_request', scope: 'srv', name: 'lookup', arguments: '{"q":"rm"}' })]);
    const approvalId = response.output[0].id as string;
    expect(state.saved[0].modelItems[1]).toEqual({ type: 'function_call', call_id: approvalId, name: 'srv__lookup', arguments: '{"q":"rm"}' });
  });

  it('answers approval responses where they stand in a continued conversation', async () => {
    const prior = new RecordingStateStore({
      modelItems: [
        { type: 'message', role: 'user', content: 'look both up' },
        { type: 'function_call', call_id: 'mcpr_1', name: 'srv__lookup', arguments: '{"q":1}' },
        { type: 'function_call', call_id: 'mcpr_2', name: 'srv__lookup', arguments: '{"q":2}' },
      ],
      publicItems: [
        { type: 'probe_approval_request', id: 'mcpr_1', scope: 'srv', name: 'lookup', arguments: '{"q":1}' },
        { type: 'probe_approval_request', id: 'mcpr_2', scope: 'srv', name: 'lookup', arguments: '{"q":2}' },
      ],
    });
    await setUp([[...messageEvents('m', ['summary']), finished]], {}, prior);
    const events = await run({
      previousResponseId: 'resp_prev',
      tools: [probe('lookup', { server_label: 'srv', require_approval: true })],
      input: [
        { type: 'probe_approval_response', approval_request_id: 'mcpr_1', approve: true },
        { type: 'probe_approval_response', approval_request_id: 'mcpr_2', approve: false, reason: 'not that one' },
        { type: 'message', role: 'user', content: 'then summarise' },
      ],
    });

    expect(executor.calls.map((c) => c.call)).toEqual([expect.objectContaining({ callId: 'mcpr_1', approvalRequestId: 'mcpr_1', arguments: '{"q":1}' })]);
    const input = upstream.requests[0].input;
    expect(input.map((i) => [i.type, (i as { call_id?: string }).call_id ?? (i as { content?: unknown }).content])).toEqual([
      ['message', 'look both up'],
      ['function_call', 'mcpr_1'],
      ['function_call', 'mcpr_2'],
      ['function_call_output', 'mcpr_1'],
      ['function_call_output', 'mcpr_2'],
      ['message', 'then summarise'],
    ]);
    expect(input[3]).toMatchObject({ output: 'probed lookup with {"q":1}' });
    expect(JSON.parse((input[4] as { output: string }).output).error.code).toBe('approval_denied');
    expect(outputTypes(events)).toEqual(['probe_call', 'message']);
  });

  describe('errors', () => {
    const failingRound =
      (err: Error, before: ModelEvent[] = messageEvents('m', ['partial']).slice(0, 2)): ScriptedRound =>
      () =>
        concat(
          from(before),
          throwError(() => err),
        );

    it('blocking mode: the error propagates to the caller, even after output began', async () => {
      await setUp([failingRound(new UpstreamUnavailableError('upstream reset the connection'))]);
      const result = run({ stream: false });
      await expect(result).rejects.toBeInstanceOf(UpstreamUnavailableError);
      expect(state.saved).toHaveLength(0);
    });

    it('streaming mode after start: the stream ends with response.failed', async () => {
      await setUp([failingRound(new UpstreamUnavailableError('upstream reset the connection'))]);
      const events = await run({ stream: true });

      const last = events[events.length - 1];
      expect(last.type).toBe('response.failed');
      expect(events.filter((e) => e.type === 'response.failed')).toHaveLength(1);
      const response = responseOf(events);
      expect(response.status).toBe('failed');
      expect(response.error).toEqual({ code: 'upstream_unavailable', message: 'upstream reset the connection' });
      expect(state.saved).toHaveLength(0);
      expect(state.discarded).toEqual([response.id]);
    });

    it('streaming mode: an unexpected error is reported without its details', async () => {
      await setUp([failingRound(new Error('secret internal detail'))]);
      const events = await run({ stream: true });
      expect(responseOf(events).error).toEqual({ code: 'server_error', message: expect.not.stringContaining('secret') });
    });

    it('streaming mode before anything was sent: the error propagates, so the caller can still answer with a status', async () => {
      await setUp([failingRound(new UpstreamUnavailableError('refused'), [])]);
      await expect(run({ stream: true })).rejects.toBeInstanceOf(UpstreamUnavailableError);
    });

    it('a failing round cancels the gateway calls it started', async () => {
      await setUp([failingRound(new UpstreamUnavailableError('gone'), callEvents('g', 'call_1', 'lookup', ['{}']))]);
      executor.behaviour = hang;
      const events = await run({ stream: true, tools: [probe('lookup')] });
      expect(events[events.length - 1].type).toBe('response.failed');
      expect(executor.calls).toHaveLength(1);
      expect(executor.calls[0].ctx.signal.aborted).toBe(true);
    });
  });

  describe('unsubscribing (client gone)', () => {
    it('aborts the upstream request and the gateway calls in flight', async () => {
      await setUp([() => concat(from(callEvents('g', 'call_1', 'lookup', ['{}'])), NEVER as Observable<ModelEvent>)]);
      executor.behaviour = hang;
      const seen: string[] = [];
      let ended = false;
      const subscription = harness!.loop.run(responseRequest({ stream: true, tools: [probe('lookup')] }), { state }).subscribe({
        next: (e) => seen.push(e.type),
        error: () => (ended = true),
        complete: () => (ended = true),
      });
      await until(() => executor.calls.length === 1);
      expect(upstream.abandoned).toBe(0);

      subscription.unsubscribe();
      await flush();

      expect(upstream.abandoned).toBe(1);
      expect(executor.calls[0].ctx.signal.aborted).toBe(true);
      expect(seen.some((t) => t === 'response.completed' || t === 'response.failed')).toBe(false);
      expect(ended).toBe(false);
      expect(state.saved).toHaveLength(0);
    });

    it('while only gateway calls are running: aborts them and neither infers again nor saves', async () => {
      await setUp([
        [...callEvents('g', 'call_1', 'lookup', ['{}']), finished],
        [...messageEvents('m', ['never sent']), finished],
      ]);
      executor.behaviour = hang;
      const subscription = harness!.loop.run(responseRequest({ tools: [probe('lookup')] }), { state }).subscribe();
      await until(() => executor.calls.length === 1);

      subscription.unsubscribe();
      for (let i = 0; i < 5; i++) await flush();

      expect(executor.calls[0].ctx.signal.aborted).toBe(true);
      expect(upstream.requests).toHaveLength(1);
      expect(state.saved).toHaveLength(0);
    });

    it('in a mixed turn whose gateway call is still running: does not finish or save the cancelled response', async () => {
      await setUp([[...callEvents('g', 'call_1', 'lookup', ['{}']), ...callEvents('c', 'call_2', 'run_shell', ['{}']), finished]]);
      executor.behaviour = hang;
      const seen: string[] = [];
      const subscription = harness!.loop.run(responseRequest({ tools: [probe('lookup'), fn('run_shell')] }), { state }).subscribe((e) => seen.push(e.type));
      await until(() => executor.calls.length === 1);

      subscription.unsubscribe();
      for (let i = 0; i < 5; i++) await flush();

      expect(executor.calls[0].ctx.signal.aborted).toBe(true);
      expect(state.saved).toHaveLength(0);
    });
  });

  describe('continuation rules', () => {
    it('generate:false prepares, saves and completes with empty output, calling no model', async () => {
      await setUp([]);
      const events = await run({ generate: false, tools: [fn('run_shell')], input: [{ type: 'message', role: 'user', content: 'warm up' }] });
      expect(upstream.requests).toHaveLength(0);
      expect(events.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.completed']);
      expect(responseOf(events)).toMatchObject({ status: 'completed', output: [], usage: { total_tokens: 0 } });
      expect(responseOf(events).tools.map((t: JsonObject) => t.name)).toEqual(['run_shell']);
      expect(state.saved).toHaveLength(1);
      expect(state.saved[0].modelItems).toEqual([{ type: 'message', role: 'user', content: 'warm up' }]);
    });

    it('refuses an output for a call nowhere in the history before calling the model', async () => {
      await setUp([[...messageEvents('m', ['never']), finished]]);
      await expect(run({ input: [{ type: 'function_call_output', id: 'fco_1', call_id: 'call_ghost', output: 'x' }] })).rejects.toMatchObject({
        name: 'InvalidRequestError',
        param: 'input[0].call_id',
        code: 'tool_call_not_found',
      });
      expect(upstream.requests).toHaveLength(0);
    });

    it('accepts an output for a call the prior transcript holds but the public history hides (a gateway call)', async () => {
      const prior = new RecordingStateStore({
        modelItems: [{ type: 'function_call', call_id: 'call_hidden', name: 'lookup', arguments: '{}' }],
        publicItems: [],
      });
      await setUp([[...messageEvents('m', ['ok']), finished]], {}, prior);
      const events = await run({ input: [{ type: 'function_call_output', id: 'fco_1', call_id: 'call_hidden', output: 'x' }] });
      expect(responseOf(events).status).toBe('completed');
    });

    it('fits max_output_tokens to the context the upstream reports, per round, and leaves it alone when unknown', async () => {
      class ContextUpstream extends ScriptedUpstreamClient {
        override async listModels() {
          return [{ id: 'test-model', object: 'model' as const, created: 0, owned_by: 'test', max_model_len: 1_000 }];
        }
      }
      upstream = new ContextUpstream([
        [...messageEvents('m', ['ok']), finished],
        [...messageEvents('m', ['ok']), finished],
      ]);
      harness = await createLoopHarness({ upstream, toolModules: [FunctionToolModule] });
      state = new RecordingStateStore();
      await run({ maxOutputTokens: 32_000 });
      expect(upstream.requests[0].max_output_tokens).toBeGreaterThan(900);
      expect(upstream.requests[0].max_output_tokens).toBeLessThan(1_000);
      await run({ maxOutputTokens: 100 });
      expect(upstream.requests[1].max_output_tokens).toBe(100);
      await harness.close();

      await setUp([[...messageEvents('m', ['ok']), finished]]);
      await run({ maxOutputTokens: 32_000 });
      expect(upstream.requests[0].max_output_tokens).toBe(32_000);
    });
  });
});
