import type { ClientCallRestoration, NormalizedTool, ToolHandler } from '#tool-sdk/contract/index.js';
import type { JsonObject } from '#tool-sdk/items.js';
import { ToolPreparationService } from '../registry/tool-preparation.service.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import { callEvents, explorerWith, testConfig } from '../testing/fixtures.js';
import { initialRoundState, roundReducer, UPSTREAM_END, type DetectedGatewayCall, type RoundInput } from './round-classification.js';
import { type ResponseStreamEvent } from './response-events.js';
import { ResponseOutput } from './response-output.js';
import type { ResponseRequest } from './response-request.js';

/**
 * A client-owned test type whose call item is built by its handler
 * (`relay: {kind: "restored"}`): `dial_call {number}`, refused when the
 * model's `n` is not a number. Core knows nothing of it.
 */
class DialHandler implements ToolHandler<Record<string, never>> {
  readonly type = 'dial';
  readonly gatewayOwned = false;
  readonly clientCalls = {
    restore(args: string): ClientCallRestoration {
      const n = (JSON.parse(args) as JsonObject).n;
      if (typeof n !== 'number') return { error: 'n must be a number' };
      return { fields: { number: n }, events: [{ type: 'response.dial_call.ringing', digits: String(n).length }] };
    },
  };
  validate(): Record<string, never> {
    return {};
  }
  normalize(): NormalizedTool[] {
    return [
      {
        fn: { type: 'function', name: 'dial', parameters: { type: 'object', properties: { n: { type: 'number' } } } },
        toolName: 'dial',
        clientShape: { kind: 'dial_call', name: 'dial', relay: { kind: 'restored' }, idPrefix: 'dl', omitName: true, trailingFields: { line: 1 } },
      },
    ];
  }
}

let registry: ToolRegistry;
beforeAll(async () => {
  registry = await new ToolPreparationService(explorerWith([new DialHandler()]), testConfig()).prepare([{ type: 'dial' }], {
    history: [],
    signal: new AbortController().signal,
    requestId: 'r',
  });
});

function accumulate(events: ReturnType<typeof callEvents>, close = false) {
  const emitted: ResponseStreamEvent[] = [];
  const detected: DetectedGatewayCall[] = [];
  // The run's edge numbers the events and keeps the output, as it does for a run.
  const ledger = new ResponseOutput('resp_test', 0, {} as ResponseRequest);
  const reduce = roundReducer(registry, { include: [], reasoningEvents: 'openai' });
  const inputs: RoundInput[] = close ? [...events, UPSTREAM_END] : events;
  let round = initialRoundState;
  for (const input of inputs) {
    const step = reduce(round, input);
    round = step.state;
    for (const e of step.events) emitted.push(ledger.stamp(e)!);
    detected.push(...step.calls);
  }
  return { round, emitted, detected };
}

describe('client calls restored by their handler', () => {
  it('announce the item once the arguments are complete: added, the planned events, done, with the fields in place of arguments', () => {
    const { round, emitted, detected } = accumulate(callEvents('k', 'call_1', 'dial', ['{"n": ', '42}']));
    expect(emitted.map((e) => e.type)).toEqual(['response.output_item.added', 'response.dial_call.ringing', 'response.output_item.done']);
    const done = emitted[2].item as JsonObject;
    expect(done).toMatchObject({ type: 'dial_call', status: 'completed', call_id: 'call_1', number: 42, line: 1 });
    expect(done).not.toHaveProperty('arguments');
    expect(done).not.toHaveProperty('name');
    expect(String(done.id)).toMatch(/^dl_/);
    expect(emitted[1]).toMatchObject({ item_id: done.id, output_index: 0, digits: 2 });
    expect(round.clientCalls).toBe(1);
    expect(detected).toEqual([]);
    expect(round.modelItems).toEqual([{ type: 'function_call', call_id: 'call_1', name: 'dial', arguments: '{"n": 42}' }]);
  });

  it('a refused call emits nothing public and goes to the batch with the text the model reads', () => {
    const { round, emitted, detected } = accumulate(callEvents('k', 'call_2', 'dial', ['{"n": "x"}']));
    expect(emitted).toEqual([]);
    expect(round.clientCalls).toBe(0);
    expect(detected).toHaveLength(1);
    expect(detected[0]).toMatchObject({ callId: 'call_2', rejected: 'n must be a number', entry: { toolType: 'dial' } });
    // The model's call stays in its transcript; the batch adds the refusal as its output.
    expect(round.modelItems).toEqual([{ type: 'function_call', call_id: 'call_2', name: 'dial', arguments: '{"n": "x"}' }]);
  });

  it('a restored call cut short was never announced, so nothing is closed for it', () => {
    const [start, delta] = callEvents('k', 'call_3', 'dial', ['{"n": 4']);
    const { round, emitted } = accumulate([start, delta], true);
    expect(emitted).toEqual([]);
    expect(round.clientCalls).toBe(0);
  });
});
