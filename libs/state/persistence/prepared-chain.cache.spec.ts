import type { StoredResponse } from '#storage/index.js';
import { BASE_MODEL_ITEMS, extendChain, PreparedChainCache, prepareChain } from './prepared-chain.cache.js';

let n = 0;
function stored(previousResponseId: string | null, extra?: StoredResponse['extra']): StoredResponse {
  const id = `resp_${++n}`;
  return {
    id,
    owner: 'o',
    createdAt: n,
    previousResponseId,
    conversationId: null,
    status: 'completed',
    response: { id, output: [{ type: 'message', id: `msg_out_${n}`, role: 'assistant', content: [{ type: 'output_text', text: `answer ${n}` }] }] },
    inputItems: [{ type: 'message', id: `msg_in_${n}`, role: 'user', content: `question ${n}` }],
    modelItems: [
      { type: 'message', role: 'user', content: `question ${n}` },
      { type: 'message', role: 'assistant', content: `answer ${n}` },
    ],
    tools: [{ type: 'function', name: `tool_${n}` }],
    toolChoice: 'auto',
    ...(extra ? { extra } : {}),
  };
}

function chainOf(length: number): StoredResponse[] {
  const chain = [stored(null)];
  while (chain.length < length) chain.push(stored(chain.at(-1)!.id));
  return chain;
}

describe('prepared chains', () => {
  it('extending a prepared chain by its next response equals preparing the longer chain whole', () => {
    const chain = chainOf(3);
    expect(extendChain(prepareChain(chain.slice(0, 2)), chain[2])).toEqual(prepareChain(chain));
    const prepared = prepareChain(chain);
    expect(prepared.ids).toEqual(chain.map((r) => r.id));
    expect(prepared.whole).toBe(true);
    expect(prepared.modelItems).toHaveLength(6);
    // Input then output of each response, oldest first.
    expect(prepared.publicItems.map((i) => i.id)).toEqual(chain.flatMap((r) => [`msg_in_${r.id.slice(5)}`, `msg_out_${r.id.slice(5)}`]));
    expect(prepared.tools).toEqual(chain[2].tools);
  });

  it('starts over from a compacted base where a response carries one', () => {
    const first = stored(null);
    const base = [{ type: 'message', role: 'user', content: 'summary' }];
    const second = stored(first.id, { [BASE_MODEL_ITEMS]: base });
    expect(prepareChain([first, second]).modelItems).toEqual([...base, ...second.modelItems]);
  });

  it('keeps only whole chains, for their owner, and drops the least recently used past its size budget', () => {
    const probe = new PreparedChainCache(Number.MAX_SAFE_INTEGER, 1000);
    probe.set(prepareChain(chainOf(1)));
    const one = probe.heldSize;
    expect(one).toBeGreaterThan(0);

    const cache = new PreparedChainCache(Math.floor(2.5 * one), 1000);
    const cut = chainOf(3).slice(1);
    cache.set(prepareChain(cut));
    expect(cache.get(cut[1].id, 'o')).toBeUndefined();
    expect(cache.heldSize).toBe(0);

    const [first, second, third] = [prepareChain(chainOf(1)), prepareChain(chainOf(1)), prepareChain(chainOf(1))];
    for (const chain of [first, second]) cache.set(chain);
    expect(cache.get(first.ids[0], 'someone else')).toBeUndefined();
    expect(cache.get(first.ids[0], 'o')).toBe(first);
    // A third goes past the budget: the least recently used (second) is dropped.
    cache.set(third);
    expect(cache.get(second.ids[0], 'o')).toBeUndefined();
    expect(cache.get(first.ids[0], 'o')).toBe(first);
    expect(cache.get(third.ids[0], 'o')).toBe(third);
    // A chain larger than the whole budget is not kept.
    cache.set(prepareChain(chainOf(3)));
    expect(cache.get(third.ids[0], 'o')).toBe(third);
  });

  it('freezes what it keeps, so a run changing an item in place fails instead of altering later history', () => {
    const cache = new PreparedChainCache(Number.MAX_SAFE_INTEGER, 1000);
    const chain = prepareChain(chainOf(1));
    cache.set(chain);
    expect(() => (chain.modelItems as unknown[]).push({})).toThrow(TypeError);
    expect(() => {
      (chain.publicItems[0] as Record<string, unknown>).content = 'changed';
    }).toThrow(TypeError);
  });

  it('does not keep or extend a chain the store would cut at its depth bound', () => {
    const cache = new PreparedChainCache(Number.MAX_SAFE_INTEGER, 2);
    const two = prepareChain(chainOf(2));
    expect(cache.canExtend(two, 1)).toBe(false);
    expect(cache.canExtend(prepareChain(chainOf(1)), 1)).toBe(true);
    cache.set(prepareChain(chainOf(3)));
    cache.set(two);
    expect(cache.get(two.ids[1], 'o')).toBe(two);
  });
});
