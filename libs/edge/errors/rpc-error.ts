import { toErrorEnvelope, type ErrorEnvelope } from './error-envelope.js';

/**
 * What an RPC caller receives when a request fails: the OpenAI envelope the
 * HTTP route would have sent, plus the status it would have had, so that a
 * broker client can tell a 400 (fix the request) from a 502 (retry later).
 */
export interface RpcErrorPayload extends ErrorEnvelope {
  status: number;
  /** The headers HTTP would have sent with it (`retry-after`, `x-ratelimit-*` on a 429). */
  headers?: Record<string, string>;
}

/** The one mapping, shared with HTTP (`toErrorEnvelope`). */
export function toRpcError(err: unknown): RpcErrorPayload {
  // Already mapped at the edge (the responder): pass it on as it is.
  if (isRpcErrorPayload(err)) return err;
  const { status, body, headers } = toErrorEnvelope(err);
  return { status, error: { ...body.error }, ...(headers && Object.keys(headers).length > 0 ? { headers: { ...headers } } : {}) };
}

/** Whether a value a broker client received is such a payload (transports deliver it as plain JSON). */
export function isRpcErrorPayload(value: unknown): value is RpcErrorPayload {
  const v = value as Partial<RpcErrorPayload> | null;
  return !!v && typeof v === 'object' && typeof v.status === 'number' && !!v.error && typeof v.error.message === 'string';
}
