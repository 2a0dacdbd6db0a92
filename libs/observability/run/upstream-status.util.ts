import { UpstreamHttpError, UpstreamTimeoutError, UpstreamUnavailableError, isGatewayError } from '#tool-sdk/errors.js';

export { errorDetailOf } from '#tool-sdk/errors.js';
import { errorKind } from '#edge/errors/error-kinds.js';

/**
 * A bounded label for how an upstream call ended: its HTTP status when it
 * answered, otherwise what went wrong. The transport resolves only on a
 * status below 400, so a call that streamed to the end answered 200.
 */
export function upstreamStatusOf(outcome: { error?: unknown; cancelled?: boolean }): string {
  const { error } = outcome;
  if (!error) return outcome.cancelled ? 'cancelled' : '200';
  if (error instanceof UpstreamHttpError) return String(error.upstreamStatus);
  if (error instanceof UpstreamTimeoutError) return 'timeout';
  if (error instanceof UpstreamUnavailableError) return error.code === 'upstream_unavailable' ? 'unreachable' : 'bad_response';
  return isGatewayError(error) ? 'error' : 'gateway_error';
}

/** An error's code for logs and span status: codes are fixed strings, messages may quote input. */
export function errorCodeOf(error: unknown): string {
  if (isGatewayError(error)) return error.code ?? errorKind(error).type;
  return 'internal_error';
}
