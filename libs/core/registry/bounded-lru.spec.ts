import { BoundedLru } from './bounded-lru.js';

describe('BoundedLru', () => {
  it('drops the least recently set entry past the entry bound', () => {
    const lru = new BoundedLru<string, number>(2, 1000);
    lru.set('a', 1, 10);
    lru.set('b', 2, 10);
    lru.set('c', 3, 10);
    expect([...lru.keys()]).toEqual(['b', 'c']);
    expect(lru.get('a')).toBeUndefined();
    expect(lru.bytes).toBe(20);
  });

  it('counts a hit as a use: the entry read last is kept, the other one goes', () => {
    const lru = new BoundedLru<string, number>(2, 1000);
    lru.set('a', 1, 10);
    lru.set('b', 2, 10);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3, 10);
    expect([...lru.keys()]).toEqual(['a', 'c']);
  });

  it('drops as many old entries as the byte bound needs', () => {
    const lru = new BoundedLru<string, number>(10, 100);
    lru.set('a', 1, 40);
    lru.set('b', 2, 40);
    lru.set('c', 3, 10);
    lru.set('d', 4, 70);
    expect([...lru.keys()]).toEqual(['c', 'd']);
    expect(lru.bytes).toBe(80);
  });

  it('does not keep an entry heavier than the whole byte bound, and keeps the others', () => {
    const lru = new BoundedLru<string, number>(10, 100);
    lru.set('a', 1, 50);
    expect(lru.set('huge', 2, 101)).toBe(false);
    expect([...lru.keys()]).toEqual(['a']);
    expect(lru.bytes).toBe(50);
  });

  it('replacing a key re-weighs it and makes it the most recent', () => {
    const lru = new BoundedLru<string, number>(10, 100);
    lru.set('a', 1, 60);
    lru.set('b', 2, 30);
    lru.set('a', 3, 20);
    expect([...lru.keys()]).toEqual(['b', 'a']);
    expect(lru.get('a')).toBe(3);
    expect(lru.bytes).toBe(50);
  });

  it('keeps nothing when either bound is 0', () => {
    for (const lru of [new BoundedLru<string, number>(0, 100), new BoundedLru<string, number>(10, 0)]) {
      expect(lru.enabled).toBe(false);
      expect(lru.set('a', 1, 1)).toBe(false);
      expect(lru.size).toBe(0);
      expect(lru.get('a')).toBeUndefined();
    }
  });

  it('delete gives the bytes back', () => {
    const lru = new BoundedLru<string, number>(10, 100);
    lru.set('a', 1, 60);
    expect(lru.delete('a')).toBe(true);
    expect(lru.delete('a')).toBe(false);
    expect(lru.bytes).toBe(0);
    expect(lru.set('b', 2, 100)).toBe(true);
  });
});
