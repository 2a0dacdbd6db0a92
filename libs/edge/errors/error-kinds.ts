import {
  AuthenticationError,
  ClientClosedError,
  ConflictError,
  DriverMissingError,
  ForbiddenError,
  GatewayError,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  TooLargeError,
  TooManyInFlightError,
  UnavailableError,
  UnsupportedMediaTypeError,
  UpstreamHttpError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '#tool-sdk/errors.js';

/** The `type` of OpenAI's error envelope. */
export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'rate_limit_error' | 'server_error' | 'upstream_error' | 'timeout_error';

/** How every surface says one kind of domain error: its HTTP status (broker and WebSocket replies carry it too) and envelope type. */
export interface ErrorKind {
  status: number;
  type: ErrorType;
}

type ErrorClass = abstract new (...args: never[]) => GatewayError;

/**
 * The upstream's own status decides: a 4xx is the request's fault and
 * passes on as it was; anything else (a 5xx, a redirect) is the upstream
 * failing, a 502.
 */
function upstreamHttpKind(err: GatewayError): ErrorKind {
  const upstreamStatus = (err as UpstreamHttpError).upstreamStatus;
  return {
    status: upstreamStatus >= 400 && upstreamStatus < 500 ? upstreamStatus : 502,
    type: upstreamStatus >= 500 ? 'upstream_error' : 'invalid_request_error',
  };
}

/**
 * The one table from domain error to status and type. A class not listed
 * takes its nearest listed ancestor's row (`StoreUnavailableError` is an
 * `UnavailableError`; a module's own subclass of a kind is that kind).
 */
export const ERROR_KINDS: ReadonlyMap<ErrorClass, ErrorKind | ((err: GatewayError) => ErrorKind)> = new Map<ErrorClass, ErrorKind | ((err: GatewayError) => ErrorKind)>([
  [InvalidRequestError, { status: 400, type: 'invalid_request_error' }],
  [AuthenticationError, { status: 401, type: 'authentication_error' }],
  [ForbiddenError, { status: 403, type: 'invalid_request_error' }],
  [NotFoundError, { status: 404, type: 'invalid_request_error' }],
  [ConflictError, { status: 409, type: 'invalid_request_error' }],
  [TooLargeError, { status: 413, type: 'invalid_request_error' }],
  [UnsupportedMediaTypeError, { status: 415, type: 'invalid_request_error' }],
  [RateLimitError, { status: 429, type: 'rate_limit_error' }],
  [TooManyInFlightError, { status: 429, type: 'invalid_request_error' }],
  // nginx's "client closed request": logged and counted as such; nobody is left to read it.
  [ClientClosedError, { status: 499, type: 'invalid_request_error' }],
  [UnavailableError, { status: 503, type: 'server_error' }],
  [DriverMissingError, { status: 503, type: 'server_error' }],
  [UpstreamUnavailableError, { status: 502, type: 'upstream_error' }],
  [UpstreamHttpError, upstreamHttpKind],
  [UpstreamTimeoutError, { status: 504, type: 'timeout_error' }],
  // A subclass of GatewayError itself, of no kind above: the gateway failed, and says how.
  [GatewayError, { status: 500, type: 'server_error' }],
]);

/** The same rows by class name: an error made by a plugin's own copy of the package has other classes of the same names. */
const KINDS_BY_NAME = new Map([...ERROR_KINDS].map(([cls, kind]) => [cls.name, kind]));

/** The kind of a domain error: its own class's row, else its nearest ancestor's. */
export function errorKind(err: GatewayError): ErrorKind {
  for (let cls = err.constructor; cls && cls !== Error; cls = Object.getPrototypeOf(cls) as typeof cls) {
    const row = ERROR_KINDS.get(cls as ErrorClass) ?? KINDS_BY_NAME.get(cls.name);
    if (row) return typeof row === 'function' ? row(err) : row;
  }
  return { status: 500, type: 'server_error' };
}
