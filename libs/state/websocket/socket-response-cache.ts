import type { PriorState } from '#core/loop/response-request.js';

/**
 * The last few responses of one WebSocket, each as the full state a
 * continuation starts from. This is what makes `store: false` continuations
 * work on a socket: nothing is written anywhere, and the state dies with the
 * connection. Least recently used entries go first.
 */
export class SocketResponseCache {
  private readonly entries = new Map<string, PriorState>();

  constructor(private readonly capacity: number) {}

  get(id: string): PriorState | undefined {
    const entry = this.entries.get(id);
    if (entry) {
      this.entries.delete(id);
      this.entries.set(id, entry);
    }
    return entry;
  }

  put(id: string, state: PriorState): void {
    this.entries.delete(id);
    this.entries.set(id, state);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  evict(id: string): void {
    this.entries.delete(id);
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  get size(): number {
    return this.entries.size;
  }
}
