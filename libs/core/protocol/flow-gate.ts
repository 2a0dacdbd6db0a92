/**
 * Lets the slowest consumer of a stream hold back its producer: the SSE
 * writer pauses the gate when the client's socket buffer is full and resumes
 * it on `drain`; the upstream transport stops reading the model's stream
 * while it is paused. Without it a slow client makes the gateway buffer the
 * whole answer in memory.
 */
export class FlowGate {
  private pausedNow = false;
  private readonly listeners = new Set<(paused: boolean) => void>();

  get paused(): boolean {
    return this.pausedNow;
  }

  pause(): void {
    this.set(true);
  }

  resume(): void {
    this.set(false);
  }

  /** Calls `listener` on every change; returns the function that stops it. */
  onChange(listener: (paused: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(paused: boolean): void {
    if (this.pausedNow === paused) return;
    this.pausedNow = paused;
    for (const listener of [...this.listeners]) listener(paused);
  }
}
