import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** The JSON-RPC messages of one POST body (a single message or a batch); empty when it is not JSON-RPC. */
function messagesOf(body: unknown): Array<Record<string, unknown>> {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.filter((m): m is Record<string, unknown> => !!m && typeof m === 'object');
  } catch {
    return [];
  }
}

type RequestId = string | number;

/** One request POST in flight: stopping it ends its response stream quietly. */
interface InFlight {
  stop(): void;
}

/**
 * Wraps an MCP HTTP transport's `fetch` so that cancelling a request also
 * ends the HTTP exchange that carries it.
 *
 * The SDK cancels a request by sending `notifications/cancelled` but leaves
 * the request's own POST (whose SSE stream would carry the result) open. A
 * server that finishes the tool anyway then delivers a result for an id the
 * client has forgotten, and the SDK reports that as a transport error, which
 * used to retire the pooled connection under every other caller's calls.
 * Here, the cancellation closes that POST: before its headers it resolves as
 * an empty `202` (nothing more to read), afterwards its stream simply ends.
 * Either way the SDK sees a normal end, not an error, and nothing late can
 * arrive on it.
 */
export function withRequestCancellation(inner: FetchLike): FetchLike {
  const inFlight = new Map<RequestId, InFlight>();

  return async (input, init = {}) => {
    const messages = messagesOf(init.body);
    for (const m of messages) {
      if (m.method === 'notifications/cancelled') {
        const id = (m.params as { requestId?: RequestId } | undefined)?.requestId;
        if (id !== undefined) inFlight.get(id)?.stop();
      }
    }
    const ids = messages.filter((m) => typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number')).map((m) => m.id as RequestId);
    if (ids.length === 0) return inner(input, init);

    const cancelled = new AbortController();
    const outer = init.signal ?? undefined;
    const onOuterAbort = () => cancelled.abort(outer?.reason);
    outer?.addEventListener('abort', onOuterAbort, { once: true });
    let stopped = false;
    let stopStream: (() => void) | undefined;
    const entry: InFlight = {
      stop: () => {
        stopped = true;
        forget();
        if (stopStream) stopStream();
        else cancelled.abort(new Error('request cancelled'));
      },
    };
    const forget = () => {
      outer?.removeEventListener('abort', onOuterAbort);
      for (const id of ids) if (inFlight.get(id) === entry) inFlight.delete(id);
    };
    for (const id of ids) inFlight.set(id, entry);

    let response: Response;
    try {
      response = await inner(input, { ...init, signal: cancelled.signal });
    } catch (err) {
      forget();
      // Cancelled before the server answered: nothing to read, and not a transport failure.
      if (stopped) return new Response(null, { status: 202 });
      throw err;
    }
    if (stopped) {
      await response.body?.cancel().catch(() => undefined);
      return new Response(null, { status: 202 });
    }
    if (!response.body) {
      forget();
      return response;
    }
    const reader = response.body.getReader();
    let closed = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        stopStream = () => {
          if (closed) return;
          closed = true;
          // Ends the stream for the SDK as if the server had closed it, and drops the socket under it.
          controller.close();
          void reader.cancel().catch(() => undefined);
        };
      },
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (err) {
          forget();
          if (!closed) {
            closed = true;
            controller.error(err);
          }
          return;
        }
        if (closed) return;
        if (chunk.done) {
          closed = true;
          forget();
          controller.close();
        } else {
          controller.enqueue(chunk.value);
        }
      },
      cancel(reason) {
        closed = true;
        forget();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
