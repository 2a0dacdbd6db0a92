import { SocketResponseCache } from './socket-response-cache.js';

const state = (tag: string) => ({ modelItems: [], publicItems: [{ type: 'message', role: 'user', content: tag }] }) as any;

describe('SocketResponseCache', () => {
  it('keeps the most recently used entries up to its capacity', () => {
    const cache = new SocketResponseCache(2);
    cache.put('a', state('a'));
    cache.put('b', state('b'));
    expect(cache.get('a')).toEqual(state('a'));
    cache.put('c', state('c'));
    // `a` was read after `b` was written, so `b` is the least recently used.
    expect(cache.has('b')).toBe(false);
    expect(cache.has('a')).toBe(true);
    expect(cache.size).toBe(2);
  });

  it('evicts on demand', () => {
    const cache = new SocketResponseCache(4);
    cache.put('a', state('a'));
    cache.evict('a');
    cache.evict('missing');
    expect(cache.get('a')).toBeUndefined();
  });
});
