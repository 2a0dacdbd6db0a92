import { toErrorEnvelope, type ErrorEnvelope } from './error-envelope.js';

/**
 * What an RPC caller receives when a request fails: the OpenAI envelope the
 * HTTP route would have sent, plus the status it would have had, so that a
 * broker client can tell a 400 (fix the request) from a 502 (retry later).
 */
export interface RpcErrorPayload extends ErrorEnvelope {
  status: number;
}

/** The one mapping, shared with HTTP (`toErrorEnvelope`). */
export function toRpcError(err: unknown): RpcErrorPayload {
  // Already mapped at the edge (the responder): pass it on as it is.
  if (isRpcErrorPayload(err)) return err;
  const { status, body } = toErrorEnvelope(err);
  return { status, error: { ...body.error } };
}

/** Whether a value a broker client received is such a payload (transports deliver it as plain JSON). */
export function isRpcErrorPayload(value: unknown): value is RpcErrorPayload {
  const v = value as Partial<RpcErrorPayload> | null;
  return !!v && typeof v === 'object' && typeof v.status === 'number' && !!v.error && typeof v.error.message === 'string';
}
