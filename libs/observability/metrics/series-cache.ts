/**
 * Series (or the next label's cache) by one label's value, made on first use
 * and kept. Nested one per label, so finding a series builds no key string.
 * Past `limit` values, each call gets a value made for it and not kept: a
 * label whose values come from outside cannot grow the cache, and those
 * values still count, at the cost of making their series again.
 */
export class SeriesCache<K, V> {
  private readonly kept = new Map<K, V>();

  constructor(
    private readonly limit: number,
    private readonly make: (key: K) => V,
  ) {}

  of(key: K): V {
    const known = this.kept.get(key);
    if (known !== undefined) return known;
    const made = this.make(key);
    if (this.kept.size < this.limit) this.kept.set(key, made);
    return made;
  }
}
