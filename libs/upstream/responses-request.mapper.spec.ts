import type { ModelItem } from '#tool-sdk/items.js';
import type { ModelRequest } from '#core/protocol/model-events.js';
import { freezeJson } from '#tool-sdk/helpers/frozen-json.js';
import { toResponsesRequest } from './responses-request.mapper.js';

const requestOf = (input: ModelItem[]) => ({ model: 'm', input, tools: [], stream: false }) as unknown as ModelRequest;

const earlierTurn = (): ModelItem[] =>
  [
    { type: 'message', role: 'user', content: 'hello' },
    { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hi' }] },
    { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'add', arguments: '{}', status: 'completed' },
  ] as unknown as ModelItem[];

describe('toResponsesRequest: kept model items', () => {
  it('maps a frozen item once and gives the same wire form on each later request, equal to a fresh mapping', () => {
    const kept = earlierTurn().map((item) => freezeJson(item));
    const first = toResponsesRequest(requestOf(kept)).input as object[];
    const second = toResponsesRequest(requestOf([...kept, { type: 'message', role: 'user', content: 'more' } as unknown as ModelItem])).input as object[];
    expect(second.slice(0, 3)).toEqual(first);
    first.forEach((wire, i) => expect(second[i]).toBe(wire));
    expect(first).toEqual(toResponsesRequest(requestOf(earlierTurn())).input);
    // The assistant message's output text carries the annotations the wire type requires.
    expect(first[1]).toEqual({ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hi', annotations: [] }] });
    expect(Object.isFrozen(first[1])).toBe(true);
  });

  it('maps a request’s own (unfrozen) items afresh each time', () => {
    const own = earlierTurn();
    const first = toResponsesRequest(requestOf(own)).input as object[];
    const second = toResponsesRequest(requestOf(own)).input as object[];
    expect(second).toEqual(first);
    first.forEach((wire, i) => expect(second[i]).not.toBe(wire));
  });

  it('keeps no wire form of a frozen reasoning item without an id: its id is made per request', () => {
    const reasoning = freezeJson({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'thought' }] } as unknown as ModelItem);
    const [a] = toResponsesRequest(requestOf([reasoning])).input as Array<{ id: string }>;
    const [b] = toResponsesRequest(requestOf([reasoning])).input as Array<{ id: string }>;
    expect(a.id).toMatch(/^rs_[0-9a-f]{24}$/);
    expect(b.id).not.toBe(a.id);
  });
});
