import type { ResponseStreamEvent } from '../../core/loop/response-events.js';
import { toRpcError } from '../../http/errors/rpc-error.js';
import type { EdgeAnswer, EdgeFolder, EdgeSurface } from '../../http/responder/edge-surface.js';

/** What `responses.create` replies: the one value the run resolved to (the response object). */
class LastValueFolder implements EdgeFolder<ResponseStreamEvent> {
  private value: unknown;

  add(frame: ResponseStreamEvent): void {
    this.value = frame.value;
  }

  answer(): EdgeAnswer {
    return { status: 200, body: this.value };
  }
}

/**
 * The Responses API over a broker: events as the SSE stream carries them,
 * and every error (a broker has no status line) as the OpenAI envelope plus
 * the status HTTP would have sent (`toRpcError`).
 */
export const rpcSurface: EdgeSurface<ResponseStreamEvent> = {
  name: 'Responses RPC',
  frames: (event) => [event],
  errorAnswer: (err) => {
    const payload = toRpcError(err);
    return { status: payload.status, body: payload };
  },
  errorFrame: (err) => ({ type: 'error', sequence_number: -1, ...toRpcError(err) }),
  folder: () => new LastValueFolder(),
};

/** A single value (the `create` reply) as the one frame a fold keeps. */
export function asValueFrame(value: unknown): ResponseStreamEvent {
  return { type: 'rpc.value', sequence_number: -1, value };
}
