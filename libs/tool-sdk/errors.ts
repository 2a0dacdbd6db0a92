/**
 * Domain errors. Deep code throws these; the edge (HTTP filter, SSE writer)
 * maps them to the OpenAI error envelope or a `response.failed` event.
 */
export type ErrorType = 'invalid_request_error' | 'not_found_error' | 'authentication_error' | 'rate_limit_error' | 'server_error' | 'upstream_error' | 'timeout_error';

export class GatewayError extends Error {
  /** Response headers that belong with the error (e.g. `retry-after`). */
  readonly headers: Record<string, string> = {};

  constructor(
    message: string,
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = new.target.name;
  }

  toEnvelope(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** A request the gateway refuses: always names the offending field in `param`. */
export class InvalidRequestError extends GatewayError {
  constructor(message: string, param: string | null, code: string | null = 'invalid_request', status = 400) {
    super(message, status, 'invalid_request_error', code, param);
  }
}

export class NotFoundError extends GatewayError {
  constructor(message: string, code: string | null = 'not_found', param: string | null = null) {
    super(message, 404, 'invalid_request_error', code, param);
  }
}

export function previousResponseNotFound(id: string): NotFoundError {
  return new NotFoundError(`Previous response with id '${id}' not found.`, 'previous_response_not_found', 'previous_response_id');
}

export function conversationNotFound(id: string): NotFoundError {
  return new NotFoundError(`Conversation with id '${id}' not found.`, 'conversation_not_found', 'conversation');
}

/** A limit of the gateway's own was reached; `Retry-After` says when to try again. */
export class RateLimitError extends GatewayError {
  constructor(message: string, code: string, retryAfterSeconds: number, param: string | null = null) {
    super(message, 429, 'rate_limit_error', code, param);
    this.headers['retry-after'] = String(retryAfterSeconds);
  }
}

export class AuthenticationError extends GatewayError {
  constructor(message = 'Missing or invalid API key.') {
    super(message, 401, 'authentication_error', 'invalid_api_key', null);
  }
}

/** The caller holds too much at once (open WebSocket connections); retry once some are closed. */
export class TooManyConnectionsError extends GatewayError {
  constructor(message: string) {
    super(message, 429, 'invalid_request_error', 'too_many_connections', null);
  }
}

/**
 * The state store cannot be reached (or does not answer in time). The
 * request may well succeed later, so it is a 503 with a hint when to retry,
 * not a 500.
 */
export class StoreUnavailableError extends GatewayError {
  constructor(message = 'The gateway cannot reach its state store right now; retry shortly.', retryAfterSeconds = 5) {
    super(message, 503, 'server_error', 'store_unavailable', null);
    this.headers['retry-after'] = String(retryAfterSeconds);
  }
}

/** The upstream refused the connection, reset it, or answered something unreadable. */
export class UpstreamUnavailableError extends GatewayError {
  constructor(message: string, code = 'upstream_unavailable') {
    super(message, 502, 'upstream_error', code, null);
  }
}

export class UpstreamTimeoutError extends GatewayError {
  constructor(message: string, code = 'upstream_timeout') {
    super(message, 504, 'timeout_error', code, null);
  }
}

/** The upstream answered with an HTTP error: its status (4xx) is passed on with its message. */
export class UpstreamHttpError extends GatewayError {
  constructor(
    message: string,
    readonly upstreamStatus: number,
    retryAfter?: string,
    classified: { code: string; param: string | null } | null = null,
  ) {
    const status = upstreamStatus >= 400 && upstreamStatus < 500 ? upstreamStatus : 502;
    super(message, status, upstreamStatus >= 500 ? 'upstream_error' : 'invalid_request_error', classified?.code ?? `upstream_${upstreamStatus}`, classified?.param ?? null);
    // A rate-limited upstream's hint is the client's to honour, so it travels with the error.
    if (retryAfter) this.headers['retry-after'] = retryAfter;
  }
}

/**
 * The model server refused the prompt as too long for its context, alone
 * (`outputTokens` null) or with the output budget asked for. Carries its
 * figures so that each edge can say it in the shape its clients act on
 * (OpenAI's `context_length_exceeded`; Anthropic's `prompt is too long` and
 * ``input length and `max_tokens` exceed context limit``).
 */
export class ContextLengthExceededError extends UpstreamHttpError {
  constructor(
    message: string,
    upstreamStatus: number,
    readonly overflow: { inputTokens: number; outputTokens: number | null; contextLength: number },
  ) {
    super(message, upstreamStatus, undefined, { code: 'context_length_exceeded', param: 'input' });
  }
}

/** A 503 for every use of a tool's tables (file search) while their database driver is not installed; boot goes on without it. */
export class DriverMissingError extends GatewayError {
  constructor(
    readonly pkg: string,
    kind: string,
  ) {
    super(`tool tables on ${kind} need the package ${pkg}, an optional peer dependency: npm install ${pkg}`, 503, 'server_error', 'driver_missing');
  }
}

export function isGatewayError(e: unknown): e is GatewayError {
  return e instanceof GatewayError;
}
