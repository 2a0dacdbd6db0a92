/**
 * A slot for a module's own state of one request, reached through the
 * request context that `discover` and `execute` are given:
 * `ctx.request.local(SLOT)` makes the value on its first use in a request,
 * and it goes when the request does. It replaces side tables keyed on a
 * request's objects (its body, its abort signal), which are parameters
 * nobody sees being passed.
 */
export class RequestLocal<T> {
  constructor(
    /** Names the slot in errors and traces. */
    readonly name: string,
    readonly create: () => T,
  ) {}
}

/** One request's context for its tool types: the gateway makes it when the request's tools are prepared; tests make their own. */
export class RequestToolContext {
  private readonly locals = new Map<RequestLocal<unknown>, unknown>();

  constructor(
    readonly requestId: string,
    readonly owner: string | null = null,
  ) {}

  local<T>(slot: RequestLocal<T>): T {
    if (!this.locals.has(slot)) this.locals.set(slot, slot.create());
    return this.locals.get(slot) as T;
  }
}
