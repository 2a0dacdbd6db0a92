/**
 * A least-recently-used map bounded twice: by its number of entries and by
 * the bytes its entries are said to weigh (each `set` says how much). Either
 * bound reached drops the least recently used entries first. A bound of 0
 * keeps nothing, and an entry heavier than the whole byte bound is not kept
 * (it would evict everything else and then itself).
 *
 * Recency is a `Map`'s insertion order: a hit is deleted and set again, so
 * the first key is always the least recently used one.
 */
export class BoundedLru<K, V> {
  private readonly map = new Map<K, { value: V; bytes: number }>();
  private totalBytes = 0;

  constructor(
    readonly maxEntries: number,
    private readonly maxBytes: number,
  ) {}

  /** False when either bound is 0: nothing would ever be kept. */
  get enabled(): boolean {
    return this.maxEntries > 0 && this.maxBytes > 0;
  }

  get size(): number {
    return this.map.size;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const slot = this.map.get(key);
    if (!slot) return undefined;
    this.map.delete(key);
    this.map.set(key, slot);
    return slot.value;
  }

  /** The value, its recency unchanged; undefined when absent. */
  peek(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  /** Keeps `value` as the most recently used; false when it could not be kept (a bound of 0, or heavier than `maxBytes`). */
  set(key: K, value: V, bytes: number): boolean {
    this.delete(key);
    if (!this.enabled || bytes > this.maxBytes) return false;
    this.map.set(key, { value, bytes });
    this.totalBytes += bytes;
    for (const [oldest, slot] of this.map) {
      if (this.map.size <= this.maxEntries && this.totalBytes <= this.maxBytes) break;
      this.map.delete(oldest);
      this.totalBytes -= slot.bytes;
    }
    return true;
  }

  delete(key: K): boolean {
    const slot = this.map.get(key);
    if (!slot) return false;
    this.map.delete(key);
    this.totalBytes -= slot.bytes;
    return true;
  }

  /** Keys from least to most recently used. */
  keys(): IterableIterator<K> {
    return this.map.keys();
  }
}
