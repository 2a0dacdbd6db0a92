import { SeriesCache } from './series-cache.js';

describe('SeriesCache', () => {
  it('keeps what it made for the first values up to its limit, and makes the rest afresh on every call', () => {
    const made: string[] = [];
    const cache = new SeriesCache(2, (key: string) => {
      made.push(key);
      return { key };
    });
    const a = cache.of('a');
    expect(cache.of('b')).toBe(cache.of('b'));
    expect(cache.of('a')).toBe(a);
    const c = cache.of('c');
    expect(c).toEqual({ key: 'c' });
    expect(cache.of('c')).not.toBe(c);
    expect(made).toEqual(['a', 'b', 'c', 'c']);
  });
});
