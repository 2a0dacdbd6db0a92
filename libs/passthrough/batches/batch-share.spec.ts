import { shareSlots } from './batch-share.js';

describe("shareSlots: a process's free batch slots split between owners", () => {
  it('gives the next free slot to an owner with nothing running, ahead of the one holding the rest', () => {
    expect(shareSlots(1, ['a', 'b'], new Map([['a', 3]]), 0)).toEqual(new Map([['b', 1]]));
  });

  it('evens out what each owner holds, then goes round from the turn', () => {
    expect(shareSlots(4, ['a', 'b'], new Map([['a', 2]]), 0)).toEqual(
      new Map([
        ['b', 3],
        ['a', 1],
      ]),
    );
    expect(shareSlots(1, ['a', 'b', 'c'], new Map(), 0)).toEqual(new Map([['a', 1]]));
    expect(shareSlots(1, ['a', 'b', 'c'], new Map(), 1)).toEqual(new Map([['b', 1]]));
    expect(shareSlots(1, ['a', 'b', 'c'], new Map(), 5)).toEqual(new Map([['c', 1]]));
  });

  it('gives nothing when there are no slots or no owners', () => {
    expect(shareSlots(0, ['a'], new Map(), 0).size).toBe(0);
    expect(shareSlots(3, [], new Map(), 0).size).toBe(0);
  });

  it('stays even as owners grow: 10x and 100x the owners each get their share of as many slots', () => {
    for (const n of [4, 40, 400]) {
      const owners = Array.from({ length: n }, (_, i) => `o${i}`);
      const shares = shareSlots(n * 2, owners, new Map(), 3);
      expect([...shares.values()].every((v) => v === 2)).toBe(true);
      expect(shares.size).toBe(n);
    }
  });
});
