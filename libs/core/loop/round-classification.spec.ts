import { CustomToolHandler } from '#tools/custom/custom.tool-handler.js';
import { FileSearchToolHandler } from '#tools/file-search/file-search.tool-handler.js';
import { FunctionToolHandler } from '#tools/function/function.tool-handler.js';
import { NamespaceToolHandler } from '#tools/namespace/namespace.tool-handler.js';
import { ToolSearchToolHandler } from '#tools/tool-search/tool-search.tool-handler.js';
import type { ModelEvent } from '../protocol/model-events.js';
import { ToolPreparationService } from '../registry/tool-preparation.service.js';
import type { ToolEntry, ToolRegistry } from '../registry/tool-registry.js';
import { callEvents, explorerWith, finished, messageEvents, testConfig, usageEvent } from '../testing/fixtures.js';
import { ProbeExecutor, ProbeToolHandler } from '../testing/probe-tool.js';
import {
  initialRoundState,
  roundItemIds,
  roundReducer,
  UPSTREAM_END,
  type ClassificationOptions,
  type DetectedGatewayCall,
  type RoundInput,
  type RoundState,
  type RoundStep,
} from './round-classification.js';
import { type ReasoningEventStyle, type ResponseStreamEvent } from './response-events.js';
import { ResponseOutput } from './response-output.js';
import type { ResponseRequest } from './response-request.js';
import { ReasoningTokenCodec } from '#state/reasoning/reasoning-token.codec.js';

let registry: ToolRegistry;

beforeAll(async () => {
  const explorer = explorerWith(
    [new FunctionToolHandler(), new CustomToolHandler(), new NamespaceToolHandler(), new FileSearchToolHandler(), new ProbeToolHandler(), new ToolSearchToolHandler()],
    [new ProbeExecutor()],
  );
  registry = await new ToolPreparationService(explorer, testConfig()).prepare(
    [
      { type: 'function', name: 'run_shell' },
      { type: 'custom', name: 'apply_patch' },
      {
        type: 'namespace',
        name: 'files',
        tools: [
          { type: 'function', name: 'read' },
          { type: 'custom', name: 'write' },
        ],
      },
      { type: 'probe', name: 'lookup' },
      { type: 'file_search', vector_store_ids: ['vs_1'] },
      { type: 'tool_search', execution: 'client' },
    ],
    { history: [], signal: new AbortController().signal, requestId: 'r' },
  );
});

function accumulate(events: ModelEvent[], options: { reasoningEvents?: ReasoningEventStyle; include?: string[]; seal?: ClassificationOptions['seal'] } = {}) {
  const emitted: ResponseStreamEvent[] = [];
  const gatewayCalls: DetectedGatewayCall[] = [];
  // The run's edge numbers the events and keeps the output, as it does for a run.
  const ledger = new ResponseOutput('resp_test', 0, {} as ResponseRequest);
  const reduce = roundReducer(registry, {
    include: options.include ?? [],
    reasoningEvents: options.reasoningEvents ?? 'openai',
    seal: options.seal,
  });
  let state = initialRoundState;
  const fold = (input: RoundInput) => {
    const step = reduce(state, input);
    state = step.state;
    for (const event of step.events) emitted.push(ledger.stamp(event)!);
    gatewayCalls.push(...step.calls);
  };
  for (const event of events) fold(event);
  // The round as the fold leaves it; `end()` folds the upstream's end.
  const round = {
    get modelItems() {
      return state.modelItems;
    },
    get usage() {
      return state.usage;
    },
    get finish() {
      return state.finish;
    },
    get clientCalls() {
      return state.clientCalls;
    },
    end: () => fold(UPSTREAM_END),
  };
  return { round, emitted, gatewayCalls, ledger, types: () => emitted.map((e) => e.type) };
}

/** Every item that was added must be done, once, at the same output index. */
function expectBalancedLifecycle(emitted: ResponseStreamEvent[]): void {
  const added = emitted.filter((e) => e.type === 'response.output_item.added').map((e) => e.output_index);
  const done = emitted.filter((e) => e.type === 'response.output_item.done').map((e) => e.output_index);
  expect([...done].sort()).toEqual([...added].sort());
}

describe('the round classification', () => {
  describe('messages', () => {
    it('emits the message lifecycle in order, with one item id and increasing sequence numbers', () => {
      const { emitted, types, ledger, round } = accumulate([...messageEvents('m', ['Hel', 'lo']), usageEvent(3, 2), finished]);

      expect(types()).toEqual([
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
      ]);
      expect(emitted.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6]);
      const id = (emitted[0].item as { id: string }).id;
      expect(id).toMatch(/^msg_/);
      expect(emitted.slice(1).every((e) => (e.item_id ?? (e.item as { id: string }).id) === id)).toBe(true);
      expect(emitted[0].item).toMatchObject({ type: 'message', role: 'assistant', status: 'in_progress', content: [] });
      expect(emitted.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta)).toEqual(['Hel', 'lo']);
      expect(emitted[4]).toMatchObject({ text: 'Hello', output_index: 0, content_index: 0 });
      expect(emitted[6].item).toMatchObject({ status: 'completed', content: [{ type: 'output_text', text: 'Hello' }] });
      expect(ledger.items).toEqual([emitted[6].item]);
      expect(round.modelItems).toEqual([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', annotations: [] }] }]);
      expect(round.usage?.total_tokens).toBe(5);
      expect(round.finish).toEqual({ status: 'completed', reason: null });
      expect(round.clientCalls).toBe(0);
    });

    it('relays a non-streamed message (done without deltas) as exactly one delta', () => {
      const { emitted, types } = accumulate([
        { type: 'message.start', key: 'm' },
        { type: 'message.done', key: 'm', text: 'All at once' },
      ]);
      const deltas = emitted.filter((e) => e.type === 'response.output_text.delta');
      expect(deltas.map((e) => e.delta)).toEqual(['All at once']);
      expect(types().indexOf('response.output_text.delta')).toBeLessThan(types().indexOf('response.output_text.done'));
    });

    it('opens the message itself when the upstream skips message.start', () => {
      const { types, ledger } = accumulate([
        { type: 'message.delta', key: 'm', delta: 'x' },
        { type: 'message.done', key: 'm', text: 'x' },
      ]);
      expect(types()[0]).toBe('response.output_item.added');
      expect(ledger.items).toHaveLength(1);
    });

    it('carries the phase of commentary messages', () => {
      const { emitted } = accumulate([
        { type: 'message.start', key: 'm', phase: 'commentary' },
        { type: 'message.done', key: 'm', text: 'thinking aloud' },
      ]);
      expect(emitted[0].item).toMatchObject({ phase: 'commentary' });
      expect(emitted[emitted.length - 1].item).toMatchObject({ phase: 'commentary' });
    });
  });

  describe('reasoning', () => {
    const events: ModelEvent[] = [
      { type: 'reasoning.start', key: 'r' },
      { type: 'reasoning.delta', key: 'r', delta: 'step 1; ' },
      { type: 'reasoning.delta', key: 'r', delta: 'step 2' },
      { type: 'reasoning.done', key: 'r', text: 'step 1; step 2', summary: ['two steps'], encrypted_content: 'opaque' },
    ];

    it.each<[ReasoningEventStyle, string, string]>([
      ['openai', 'response.reasoning_text.delta', 'response.reasoning_text.done'],
      ['openresponses', 'response.reasoning.delta', 'response.reasoning.done'],
    ])('uses the %s event names', (style, delta, done) => {
      const { types, emitted } = accumulate(events, { reasoningEvents: style });
      expect(types()).toEqual(['response.output_item.added', 'response.content_part.added', delta, delta, done, 'response.content_part.done', 'response.output_item.done']);
      expect(emitted[0].item).toMatchObject({ content: [] });
      expect(emitted[1]).toMatchObject({ content_index: 0, part: { type: 'reasoning_text', text: '' } });
      expect(emitted[4]).toMatchObject({ content_index: 0, text: 'step 1; step 2' });
      expect(emitted[5]).toMatchObject({ content_index: 0, part: { type: 'reasoning_text', text: 'step 1; step 2' } });
    });

    it("opens the part where the upstream opens it (vLLM's reasoning_part.added), once", () => {
      const { types } = accumulate([
        { type: 'reasoning.start', key: 'r' },
        { type: 'reasoning.part', key: 'r' },
        { type: 'reasoning.delta', key: 'r', delta: 'a' },
        { type: 'reasoning.done', key: 'r', text: 'a' },
      ]);
      expect(types()).toEqual([
        'response.output_item.added',
        'response.content_part.added',
        'response.reasoning_text.delta',
        'response.reasoning_text.done',
        'response.content_part.done',
        'response.output_item.done',
      ]);
    });

    it('announces no part for reasoning without text (encrypted only)', () => {
      const { types, ledger } = accumulate([
        { type: 'reasoning.start', key: 'r' },
        { type: 'reasoning.done', key: 'r', text: '', encrypted_content: 'opaque' },
      ]);
      expect(types()).toEqual(['response.output_item.added', 'response.output_item.done']);
      expect(ledger.items[0]).toMatchObject({ type: 'reasoning', content: [] });
    });

    it('builds the reasoning item; encrypted content only when included, always for the model', () => {
      const plain = accumulate(events);
      const done = plain.emitted[plain.emitted.length - 1].item as Record<string, unknown>;
      expect(done).toMatchObject({
        type: 'reasoning',
        status: 'completed',
        summary: [{ type: 'summary_text', text: 'two steps' }],
        content: [{ type: 'reasoning_text', text: 'step 1; step 2' }],
      });
      expect(done.encrypted_content).toBeUndefined();
      expect(plain.round.modelItems[0]).toMatchObject({ type: 'reasoning', encrypted_content: 'opaque' });

      const included = accumulate(events, { include: ['reasoning.encrypted_content'] });
      expect(included.ledger.items[0]).toMatchObject({ encrypted_content: 'opaque' });
    });

    it('with a sealer, the included encrypted_content is the sealed reasoning as the model wrote it (the upstream value inside it)', () => {
      const codec = new ReasoningTokenCodec('accumulator-test-key-0123');
      const sealed = accumulate(events, { include: ['reasoning.encrypted_content'], seal: (r) => codec.seal(r) });
      const token = (sealed.ledger.items[0] as Record<string, unknown>).encrypted_content as string;
      expect(token).toMatch(/^syr1\./);
      expect(codec.open(token, 'p')).toEqual(sealed.round.modelItems[0]);
      expect(sealed.round.modelItems[0]).toMatchObject({
        summary: [{ type: 'summary_text', text: 'two steps' }],
        content: [{ type: 'reasoning_text', text: 'step 1; step 2' }],
        encrypted_content: 'opaque',
      });
      // Not asked for, nothing sealed and no field.
      const notAsked = accumulate(events, { seal: (r) => codec.seal(r) });
      expect(notAsked.ledger.items[0]).not.toHaveProperty('encrypted_content');
    });

    it('relays non-streamed reasoning as one delta', () => {
      const { emitted } = accumulate([
        { type: 'reasoning.start', key: 'r' },
        { type: 'reasoning.done', key: 'r', text: 'whole' },
      ]);
      expect(emitted.filter((e) => e.type === 'response.reasoning_text.delta').map((e) => e.delta)).toEqual(['whole']);
    });
  });

  describe('client-owned calls', () => {
    it('streams a function call with its public lifecycle', () => {
      const { emitted, types, round, gatewayCalls } = accumulate(callEvents('c', 'call_1', 'run_shell', ['{"cmd":', '"ls"}']));

      expect(types()).toEqual([
        'response.output_item.added',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.done',
        'response.output_item.done',
      ]);
      expect(emitted[0].item).toMatchObject({ type: 'function_call', status: 'in_progress', call_id: 'call_1', name: 'run_shell', arguments: '' });
      expect(emitted[3]).toMatchObject({ name: 'run_shell', arguments: '{"cmd":"ls"}' });
      expect(emitted[4].item).toMatchObject({ type: 'function_call', status: 'completed', call_id: 'call_1', arguments: '{"cmd":"ls"}' });
      expect(emitted[4].item).not.toHaveProperty('namespace');
      expect(round.clientCalls).toBe(1);
      expect(round.modelItems).toEqual([{ type: 'function_call', call_id: 'call_1', name: 'run_shell', arguments: '{"cmd":"ls"}' }]);
      expect(gatewayCalls).toHaveLength(0);
    });

    it('gives a call that arrives whole (call.done only) a full lifecycle with one delta', () => {
      const { types, emitted } = accumulate([{ type: 'call.done', key: 'c', call_id: 'call_1', name: 'run_shell', arguments: '{}' }]);
      expect(types()).toEqual(['response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done']);
      expect(emitted[1].delta).toBe('{}');
    });

    it('keeps interleaved calls apart by key', () => {
      const { emitted, ledger } = accumulate([
        { type: 'call.start', key: 'a', call_id: 'call_a', name: 'run_shell' },
        { type: 'call.start', key: 'b', call_id: 'call_b', name: 'run_shell' },
        { type: 'call.delta', key: 'a', delta: '{"n":' },
        { type: 'call.delta', key: 'b', delta: '{"n":2}' },
        { type: 'call.delta', key: 'a', delta: '1}' },
        { type: 'call.done', key: 'b', call_id: 'call_b', name: 'run_shell', arguments: '{"n":2}' },
        { type: 'call.done', key: 'a', call_id: 'call_a', name: 'run_shell', arguments: '{"n":1}' },
      ]);
      const deltasAt = (index: number) => emitted.filter((e) => e.type === 'response.function_call_arguments.delta' && e.output_index === index).map((e) => e.delta);
      expect(deltasAt(0)).toEqual(['{"n":', '1}']);
      expect(deltasAt(1)).toEqual(['{"n":2}']);
      expect(ledger.items.map((i) => (i as { call_id: string }).call_id)).toEqual(['call_a', 'call_b']);
    });

    it('restores a custom tool call and streams its decoded input', () => {
      const { emitted, types, round, ledger } = accumulate(callEvents('c', 'call_c', 'apply_patch', ['{"input":"*** Begin', '\\n+line \\"q\\"', '\\n*** End"}']));

      expect(types()).toEqual([
        'response.output_item.added',
        'response.custom_tool_call_input.delta',
        'response.custom_tool_call_input.delta',
        'response.custom_tool_call_input.delta',
        'response.custom_tool_call_input.done',
        'response.output_item.done',
      ]);
      expect(emitted[0].item).toMatchObject({ type: 'custom_tool_call', call_id: 'call_c', name: 'apply_patch', input: '', status: 'in_progress' });
      const input = '*** Begin\n+line "q"\n*** End';
      expect(
        emitted
          .filter((e) => e.type === 'response.custom_tool_call_input.delta')
          .map((e) => e.delta)
          .join(''),
      ).toBe(input);
      expect(emitted[4].input).toBe(input);
      expect(ledger.items[0]).toMatchObject({ type: 'custom_tool_call', status: 'completed', input });
      expect(round.clientCalls).toBe(1);
      // The model keeps seeing its own function call.
      expect(round.modelItems[0]).toEqual({ type: 'function_call', call_id: 'call_c', name: 'apply_patch', arguments: '{"input":"*** Begin\\n+line \\"q\\"\\n*** End"}' });
    });

    it('sends custom input the streamer could not follow at the end, in one delta', () => {
      const args = '{"note":"x","input":"late"}';
      const { emitted } = accumulate(callEvents('c', 'call_c', 'apply_patch', [args.slice(0, 10), args.slice(10)]));
      expect(emitted.filter((e) => e.type === 'response.custom_tool_call_input.delta').map((e) => e.delta)).toEqual(['late']);
      expect(emitted.find((e) => e.type === 'response.custom_tool_call_input.done')?.input).toBe('late');
    });

    it('restores a namespace member call to its namespace and own name', () => {
      const { emitted, round, ledger } = accumulate(callEvents('c', 'call_n', 'files__read', ['{"path":"a"}']));
      expect(emitted[0].item).toMatchObject({ type: 'function_call', name: 'read', namespace: 'files' });
      expect(emitted.find((e) => e.type === 'response.function_call_arguments.done')).toMatchObject({ name: 'read' });
      expect(ledger.items[0]).toMatchObject({ type: 'function_call', name: 'read', namespace: 'files', status: 'completed' });
      expect(round.modelItems[0]).toMatchObject({ name: 'files__read' });
    });

    it('restores a custom namespace member as a custom call in its namespace', () => {
      const { ledger } = accumulate(callEvents('c', 'call_w', 'files__write', ['{"input":"data"}']));
      expect(ledger.items[0]).toMatchObject({ type: 'custom_tool_call', name: 'write', namespace: 'files', input: 'data' });
    });

    it('hands a tool search back as tool_search_call with its arguments as JSON, and no argument deltas', () => {
      const { emitted, round, ledger, types } = accumulate(callEvents('c', 'call_s', 'tool_search', ['{"query":', '"tickets"}']));
      expect(types()).toEqual(['response.output_item.added', 'response.output_item.done']);
      expect(emitted[0].item).toEqual({
        id: expect.stringMatching(/^tsc_/),
        type: 'tool_search_call',
        status: 'in_progress',
        call_id: 'call_s',
        execution: 'client',
        arguments: {},
      });
      expect(ledger.items[0]).toEqual({ ...(emitted[0].item as object), status: 'completed', arguments: { query: 'tickets' } });
      expect(round.clientCalls).toBe(1);
      expect(round.modelItems[0]).toEqual({ type: 'function_call', call_id: 'call_s', name: 'tool_search', arguments: '{"query":"tickets"}' });
    });

    it('keeps tool-search arguments that are not JSON as text, and ends a cut-off search incomplete', () => {
      expect(accumulate(callEvents('c', 'call_s', 'tool_search', ['tickets please'])).ledger.items[0]).toMatchObject({ arguments: 'tickets please' });
      const { round, ledger } = accumulate([
        { type: 'call.start', key: 'c', call_id: 'call_s', name: 'tool_search' },
        { type: 'call.delta', key: 'c', delta: '{"query":"ti' },
      ]);
      round.end();
      expect(ledger.items[0]).toMatchObject({ type: 'tool_search_call', status: 'incomplete', arguments: '{"query":"ti' });
    });

    it('hands back a call to an undeclared name as a function call', () => {
      const { ledger, round, gatewayCalls } = accumulate(callEvents('c', 'call_x', 'invented_tool', ['{}']));
      expect(ledger.items[0]).toMatchObject({ type: 'function_call', name: 'invented_tool', status: 'completed' });
      expect(round.clientCalls).toBe(1);
      expect(gatewayCalls).toHaveLength(0);
    });
  });

  describe('gateway-owned calls', () => {
    it('hides them from the public stream and hands them over complete', () => {
      const { emitted, gatewayCalls, round, ledger } = accumulate(callEvents('g', 'call_g', 'lookup', ['{"q":', '"x"}']));
      expect(emitted).toEqual([]);
      expect(ledger.items).toEqual([]);
      expect(round.clientCalls).toBe(0);
      expect(gatewayCalls).toHaveLength(1);
      const [detected] = gatewayCalls;
      expect(detected).toMatchObject({ callId: 'call_g', modelName: 'lookup', arguments: '{"q":"x"}' });
      expect(detected.entry).toBe(registry.lookup('lookup'));
      expect(detected.modelCall).toEqual({ type: 'function_call', call_id: 'call_g', name: 'lookup', arguments: '{"q":"x"}' });
      expect(round.modelItems).toEqual([detected.modelCall]);
    });

    it('hands over calls to gateway types without an executor too (never shown as function_call)', () => {
      const { emitted, gatewayCalls } = accumulate([{ type: 'call.done', key: 'g', call_id: 'call_fs', name: 'file_search', arguments: '{"queries":["a"]}' }]);
      expect(emitted).toEqual([]);
      expect(gatewayCalls.map((c) => c.entry.toolType)).toEqual(['file_search']);
    });

    it('leaves output indices to public items only in a mixed round', () => {
      const { emitted, gatewayCalls, round } = accumulate([
        { type: 'reasoning.start', key: 'r' },
        { type: 'reasoning.done', key: 'r', text: 'plan' },
        ...callEvents('g', 'call_g', 'lookup', ['{}']),
        ...callEvents('c', 'call_c', 'run_shell', ['{}']),
        ...messageEvents('m', ['ok']),
      ]);
      const added = emitted.filter((e) => e.type === 'response.output_item.added');
      expect(added.map((e) => [(e.item as { type: string }).type, e.output_index])).toEqual([
        ['reasoning', 0],
        ['function_call', 1],
        ['message', 2],
      ]);
      expect(gatewayCalls).toHaveLength(1);
      expect(round.modelItems.map((i) => i.type)).toEqual(['reasoning', 'function_call', 'function_call', 'message']);
      expectBalancedLifecycle(emitted);
    });
  });

  describe('usage and finish', () => {
    it('records the upstream finish reason', () => {
      const { round } = accumulate([{ type: 'finish', status: 'incomplete', reason: 'max_output_tokens' }]);
      expect(round.finish).toEqual({ status: 'incomplete', reason: 'max_output_tokens' });
    });
  });

  describe("the upstream's end", () => {
    it('closes items the upstream never finished as incomplete, keeping what arrived', () => {
      const { round, emitted, ledger } = accumulate([
        { type: 'reasoning.start', key: 'r' },
        { type: 'reasoning.delta', key: 'r', delta: 'half a thought' },
        { type: 'message.start', key: 'm' },
        { type: 'message.delta', key: 'm', delta: 'cut sh' },
      ]);
      const before = emitted.length;
      round.end();

      const closing = emitted.slice(before);
      expect(closing.filter((e) => e.type === 'response.output_item.done')).toHaveLength(2);
      expect(ledger.items[0]).toMatchObject({ type: 'reasoning', status: 'incomplete', content: [{ type: 'reasoning_text', text: 'half a thought' }] });
      expect(ledger.items[1]).toMatchObject({ type: 'message', status: 'incomplete', content: [{ type: 'output_text', text: 'cut sh' }] });
      // No duplicate text: the deltas already carried it.
      expect(closing.filter((e) => e.type === 'response.output_text.delta')).toHaveLength(0);
      expectBalancedLifecycle(emitted);
      expect(round.modelItems.map((i) => i.type)).toEqual(['reasoning', 'message']);
    });

    it('closes an unfinished client call as incomplete without handing it to the client', () => {
      const { round, emitted, ledger, gatewayCalls } = accumulate([
        { type: 'call.start', key: 'c', call_id: 'call_1', name: 'run_shell' },
        { type: 'call.delta', key: 'c', delta: '{"cmd":"l' },
        { type: 'call.start', key: 'g', call_id: 'call_2', name: 'lookup' },
      ]);
      round.end();
      expectBalancedLifecycle(emitted);
      expect(ledger.items).toHaveLength(1);
      expect(ledger.items[0]).toMatchObject({ type: 'function_call', status: 'incomplete', arguments: '{"cmd":"l' });
      expect(round.clientCalls).toBe(0);
      expect(round.modelItems).toEqual([]);
      expect(gatewayCalls).toEqual([]);
    });

    it('does nothing when everything was finished, and nothing the second time', () => {
      const { round, emitted } = accumulate([...messageEvents('m', ['done'])]);
      const before = emitted.length;
      round.end();
      round.end();
      expect(emitted).toHaveLength(before);
    });
  });
});

describe('the round reducer is a pure function of (state, input)', () => {
  /** A round with every kind of item, a gateway call, usage, finish, and a message the upstream left open. */
  const inputs: RoundInput[] = [
    { type: 'reasoning.start', key: 'r' },
    { type: 'reasoning.delta', key: 'r', delta: 'plan' },
    { type: 'reasoning.done', key: 'r', text: 'plan', summary: ['short'] },
    ...callEvents('c', 'call_c', 'run_shell', ['{"cmd":', '"ls"}']),
    ...callEvents('p', 'call_p', 'apply_patch', ['{"input":"a', 'b"}']),
    ...callEvents('g', 'call_g', 'lookup', ['{"q":"x"}']),
    ...messageEvents('m', ['Hel', 'lo']),
    usageEvent(3, 2),
    finished,
    { type: 'message.start', key: 'cut' },
    { type: 'message.delta', key: 'cut', delta: 'half' },
    UPSTREAM_END,
  ];

  /** Frozen all the way down: a reducer that wrote to its input or its options would throw (modules run strict). */
  function deepFreeze<T>(value: T): T {
    if (value && typeof value === 'object' && !Object.isFrozen(value)) {
      Object.freeze(value);
      for (const inner of Object.values(value)) deepFreeze(inner);
    }
    return value;
  }

  /** A state as plain text, tools by name: what an in-place write to it would change. */
  function fingerprint(state: RoundState): string {
    return JSON.stringify(state, (key, value: unknown) => {
      if (key === 'entry') return (value as ToolEntry | undefined)?.modelName;
      return value;
    });
  }

  function fold(reduce: ReturnType<typeof roundReducer>): RoundStep[] {
    const steps: RoundStep[] = [];
    inputs.reduce((state, input) => {
      const step = reduce(state, input);
      steps.push(step);
      return step.state;
    }, initialRoundState);
    return steps;
  }

  it('folds the same events twice into equal steps, and each step again from its own state and input', () => {
    deepFreeze(inputs);
    const options = deepFreeze({ include: ['reasoning.encrypted_content'], reasoningEvents: 'openai' as const, summary: true, ids: roundItemIds() });
    const reduce = roundReducer(registry, options);
    const first = fold(reduce);
    const prints = first.map((step) => fingerprint(step.state));
    const second = fold(reduce);

    expect(second).toEqual(first);
    // Every public item, the gateway call and the open message's close came out of the fold.
    expect(first.flatMap((step) => step.calls).map((call) => call.callId)).toEqual(['call_g']);
    expect(first.flatMap((step) => step.events).filter((event) => event.type === 'response.output_item.done')).toHaveLength(5);
    const last = first[first.length - 1].state;
    expect(last.open).toEqual([]);
    expect(last.modelItems.map((item) => item.type)).toEqual(['reasoning', 'function_call', 'function_call', 'function_call', 'message', 'message']);
    expect(last).toMatchObject({ clientCalls: 2, usage: { total_tokens: 5 }, finish: { status: 'completed' } });

    // Replayed out of order, long after the fold went past it, a state and its input give the same step.
    const states = [initialRoundState, ...first.map((step) => step.state)];
    for (let i = inputs.length - 1; i >= 0; i--) expect(reduce(states[i], inputs[i])).toEqual(first[i]);
    // No step wrote to a state it was given, nor to one it returned earlier.
    expect(first.map((step) => fingerprint(step.state))).toEqual(prints);
    expect(fingerprint(initialRoundState)).toBe(fingerprint({ open: [], modelItems: [], clientCalls: 0, usage: null, finish: null, opened: 0, started: false }));
  });

  it('takes its item ids from the id table by the order items open, not from a clock', () => {
    const ids = roundItemIds();
    const one = fold(roundReducer(registry, { include: [], reasoningEvents: 'openai', ids }));
    const other = fold(roundReducer(registry, { include: [], reasoningEvents: 'openai', ids: roundItemIds() }));
    const itemIds = (steps: RoundStep[]) =>
      steps.flatMap((step) => step.events).flatMap((event) => (event.type === 'response.output_item.added' ? [(event.item as { id: string }).id] : []));
    expect(itemIds(one)).toEqual([ids('rs', 0), ids('fc', 1), ids('ctc', 2), ids('msg', 3), ids('msg', 4)]);
    // Another round draws its own.
    expect(itemIds(other).some((id) => itemIds(one).includes(id))).toBe(false);
  });
});
