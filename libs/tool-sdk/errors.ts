/**
 * Domain errors. Each class names what went wrong (a refused request, a
 * missing object, an upstream that timed out); none carries an HTTP status or
 * an envelope type. Deep code throws these; the edge gives each class its
 * status and wire type in one table (`libs/edge/errors/error-kinds.ts`) that
 * every surface shares: the HTTP filter, the SSE and WebSocket writers, the
 * broker's replies and the Anthropic Messages envelope.
 *
 * A new kind of failure is a new subclass here, with its row in that table;
 * a module that needs a variant of a kind (its own code, its own message)
 * subclasses the kind.
 */
export abstract class GatewayError extends Error {
  /** Hints that travel with the error to every surface (`retry-after`, the `x-ratelimit-*` of a refused limit). */
  readonly headers: Record<string, string> = {};
  /**
   * What only the operator reads: an internal address, a transport's own
   * words, the setting to fix. Logged with the request (`error_detail`),
   * never written to a client; the message says what a tenant may know.
   */
  detail: string | null = null;

  constructor(
    message: string,
    /** A fixed machine-readable string (`quota_exceeded`), never the message. */
    readonly code: string | null = null,
    /** The request field at fault, as the client spelled it (`tools[0].server_url`). */
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = new.target.name;
  }

  /** Sets the operator-only `detail`; returns the error, for `throw new X(...).withDetail(...)`. */
  withDetail(detail: string): this {
    this.detail = detail;
    return this;
  }
}

/** The operator-only detail of any error, when it has one. */
export function errorDetailOf(err: unknown): string | null {
  return err instanceof GatewayError ? err.detail : null;
}

/** A request the gateway refuses as written: always names the offending field in `param`. */
export class InvalidRequestError extends GatewayError {
  constructor(message: string, param: string | null, code: string | null = 'invalid_request') {
    super(message, code, param);
  }
}

/** The object the request names does not exist (or is not the caller's to see). */
export class NotFoundError extends GatewayError {
  constructor(message: string, code: string | null = 'not_found', param: string | null = null) {
    super(message, code, param);
  }
}

export function previousResponseNotFound(id: string): NotFoundError {
  return new NotFoundError(`Previous response with id '${id}' not found.`, 'previous_response_not_found', 'previous_response_id');
}

export function conversationNotFound(id: string): NotFoundError {
  return new NotFoundError(`Conversation with id '${id}' not found.`, 'conversation_not_found', 'conversation');
}

/** The request is valid in itself and clashes with what is already there (a duplicate id, a batch past cancelling). */
export class ConflictError extends GatewayError {
  constructor(message: string, param: string | null, code: string | null = 'conflict') {
    super(message, code, param);
  }
}

/** What the request carries is larger than the gateway accepts (an uploaded file over its limit). */
export class TooLargeError extends GatewayError {
  constructor(message: string, param: string | null, code: string | null = 'request_too_large') {
    super(message, code, param);
  }
}

/** The body is in a form the route does not read (not JSON where JSON is expected). */
export class UnsupportedMediaTypeError extends GatewayError {
  constructor(message: string, param: string | null, code: string | null = 'unsupported_media_type') {
    super(message, code, param);
  }
}

/** The caller is known and not allowed this: another owner's data, or past a quota of theirs. */
export class ForbiddenError extends GatewayError {
  constructor(message: string, param: string | null, code: string | null = 'permission_denied') {
    super(message, code, param);
  }
}

/** The caller's key or token is missing or not accepted. */
export class AuthenticationError extends GatewayError {
  constructor(message = 'Missing or invalid API key.') {
    super(message, 'invalid_api_key', null);
  }
}

/** A limit of the gateway's own was reached; `retry-after` says when to try again. */
export class RateLimitError extends GatewayError {
  constructor(message: string, code: string, retryAfterSeconds: number, param: string | null = null) {
    super(message, code, param);
    this.headers['retry-after'] = String(retryAfterSeconds);
  }
}

/**
 * The caller holds too much at once (live batches, queued WebSocket requests,
 * open connections); the same request succeeds once some of those finish.
 * Not a rate limit: waiting alone does not help, finishing does.
 */
export class TooManyInFlightError extends GatewayError {
  constructor(message: string, param: string | null, code: string | null = 'too_many_in_flight') {
    super(message, code, param);
  }
}

/** Open WebSocket connections over the caller's bound; retry once some are closed. */
export class TooManyConnectionsError extends TooManyInFlightError {
  constructor(message: string) {
    super(message, null, 'too_many_connections');
  }
}

/** The client went away before the work it asked for finished; nobody reads the answer. */
export class ClientClosedError extends GatewayError {
  constructor(message: string, code: string | null = 'client_closed_request') {
    super(message, code, null);
  }
}

/**
 * A part of the gateway the request needs cannot serve it right now (the
 * rate-limit store, the identity provider, another gateway process, a
 * process that is shutting down). The request may well succeed later, so it
 * is not the gateway failing: `retry-after`, when given, says when.
 */
export class UnavailableError extends GatewayError {
  constructor(message: string, code: string, retryAfterSeconds?: number) {
    super(message, code, null);
    if (retryAfterSeconds !== undefined) this.headers['retry-after'] = String(retryAfterSeconds);
  }
}

/** The state store cannot be reached (or does not answer in time). */
export class StoreUnavailableError extends UnavailableError {
  constructor(message = 'The gateway cannot reach its state store right now; retry shortly.', retryAfterSeconds = 5) {
    super(message, 'store_unavailable', retryAfterSeconds);
  }
}

/**
 * A feature's database driver is not installed (an optional peer
 * dependency); boot goes on without it and every use of the feature says
 * which package to install. Not transient: no `retry-after`.
 */
export class DriverMissingError extends GatewayError {
  constructor(
    readonly pkg: string,
    kind: string,
    message = `tool tables on ${kind} need the package ${pkg}, an optional peer dependency: npm install ${pkg}`,
  ) {
    super(message, 'driver_missing', null);
  }
}

/** The upstream refused the connection, reset it, or answered something unreadable. */
export class UpstreamUnavailableError extends GatewayError {
  constructor(message: string, code = 'upstream_unavailable') {
    super(message, code, null);
  }
}

/** The upstream did not answer (or stopped answering) within the configured time. */
export class UpstreamTimeoutError extends GatewayError {
  constructor(message: string, code = 'upstream_timeout') {
    super(message, code, null);
  }
}

/**
 * The upstream answered with an HTTP error. Its status is the upstream's
 * own, a fact about that answer: the edge passes a 4xx on (the request was
 * at fault) and turns anything else into a failure of the upstream.
 */
export class UpstreamHttpError extends GatewayError {
  constructor(
    message: string,
    readonly upstreamStatus: number,
    retryAfter?: string,
    classified: { code: string; param: string | null } | null = null,
  ) {
    super(message, classified?.code ?? `upstream_${upstreamStatus}`, classified?.param ?? null);
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

/**
 * Marks every domain error, whichever copy of this package made it: a
 * plugin built in its own project throws its copy's `InvalidRequestError`,
 * which `instanceof` against the gateway's class does not recognise.
 */
const DOMAIN_ERROR = Symbol.for('switchyard-gateway:domain-error');
Object.defineProperty(GatewayError.prototype, DOMAIN_ERROR, { value: true });

export function isGatewayError(e: unknown): e is GatewayError {
  return e instanceof GatewayError || (e instanceof Error && (e as unknown as Record<symbol, unknown>)[DOMAIN_ERROR] === true);
}
