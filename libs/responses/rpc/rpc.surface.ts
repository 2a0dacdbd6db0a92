import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import { toRpcError } from '#edge/errors/rpc-error.js';
import type { EdgeSurface } from '#edge/responder/edge-surface.js';
import { LastValueFolder } from '#edge/responder/value-frame.js';

/**
 * The Responses API over a broker: events as the SSE stream carries them,
 * and every error (a broker has no status line) as the OpenAI envelope plus
 * the status HTTP would have sent (`toRpcError`). `create` relays one value
 * frame (the response object), folded into the reply.
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
