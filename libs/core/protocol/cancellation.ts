/**
 * What a cancellable step reads of its signal: whether and why it was
 * aborted, and a listener for the moment it is. An `AbortSignal` is one, and
 * so is a `Cancellation`.
 */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * An abort controller whose `AbortSignal` is made only when something asks
 * for it.
 *
 * Why: Node 20 builds an `AbortSignal` as an `EventTarget` whose prototype is
 * then swapped, about 3 µs each, and one more microsecond for each listener;
 * a plain run made two (its preparation, its upstream exchange) and aborted
 * neither. The gateway's own steps (the upstream transport, the tool
 * preparation) take this object as it is; code that needs a real signal (a
 * tool handler's discovery, `fetch`, `AbortSignal.any`) reads `signal`, which
 * is made then, and is already aborted if the cancellation was.
 *
 * Listeners run in the order they were added, once, when `abort` is first
 * called; a listener added after that never runs, as with `AbortSignal`.
 * One that throws does not stop the others; `abort` throws the first such
 * error once all have run (an `AbortSignal` would make it uncaught instead),
 * so that the teardown that aborted hears of it.
 */
export class Cancellation implements AbortLike {
  private controller: AbortController | undefined;
  private listeners: Array<() => void> | undefined;
  private abortedWith: { reason: unknown } | undefined;

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  get reason(): unknown {
    return this.abortedWith?.reason;
  }

  /** A real signal that follows this cancellation, made on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  /** Aborts once; `reason` defaults to the `AbortError` an `AbortController` gives. */
  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    const listeners = this.listeners;
    this.listeners = undefined;
    this.controller?.abort(reason);
    if (!listeners) return;
    let failure: { error: unknown } | undefined;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  addEventListener(type: 'abort', listener: () => void): void {
    if (type !== 'abort' || this.abortedWith) return;
    const listeners = (this.listeners ??= []);
    // An EventTarget adds the same listener once.
    if (!listeners.includes(listener)) listeners.push(listener);
  }

  removeEventListener(type: 'abort', listener: () => void): void {
    if (type !== 'abort' || !this.listeners) return;
    const at = this.listeners.indexOf(listener);
    if (at >= 0) this.listeners.splice(at, 1);
  }
}
