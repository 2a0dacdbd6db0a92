import * as domain from '#tool-sdk/errors.js';
import {
  AuthenticationError,
  ClientClosedError,
  ConflictError,
  ContextLengthExceededError,
  DriverMissingError,
  ForbiddenError,
  GatewayError,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  StoreUnavailableError,
  TooLargeError,
  TooManyConnectionsError,
  TooManyInFlightError,
  UnavailableError,
  UnsupportedMediaTypeError,
  UpstreamHttpError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '#tool-sdk/errors.js';
import { PrimaryLimitsUnavailableError } from '#limits/primary.limiter.js';
import { LimitsUnavailableError } from '#limits/redis.limiter.js';
import { GatewayDrainingError, GatewayShutdownError } from '#responses/rpc/rpc-run.registry.js';
import { IdentityProviderUnavailableError } from '#state/auth/oidc.verifier.js';
import { DuplicateIdError } from '#storage/shared/duplicate-id.error.js';
import { toAnthropicError } from '#messages/http/anthropic-error.js';
import { toErrorEnvelope } from './error-envelope.js';
import { ERROR_KINDS } from './error-kinds.js';
import { toRpcError } from './rpc-error.js';

/** A module's own error of no listed kind: the gateway failed, and says how. */
class UnlistedError extends GatewayError {}

/**
 * Every domain error class, one instance each, with the answer every surface
 * gives it: HTTP status, envelope type, code (and the headers that travel).
 */
const CASES: Array<[GatewayError, { status: number; type: string; code: string | null; param?: string | null; headers?: Record<string, string> }]> = [
  [new InvalidRequestError('bad', 'input'), { status: 400, type: 'invalid_request_error', code: 'invalid_request', param: 'input' }],
  [new AuthenticationError(), { status: 401, type: 'authentication_error', code: 'invalid_api_key' }],
  [new ForbiddenError('not yours', 'owner'), { status: 403, type: 'invalid_request_error', code: 'permission_denied', param: 'owner' }],
  [new ForbiddenError('over quota', 'file', 'quota_exceeded'), { status: 403, type: 'invalid_request_error', code: 'quota_exceeded', param: 'file' }],
  [new NotFoundError('gone'), { status: 404, type: 'invalid_request_error', code: 'not_found' }],
  [domain.previousResponseNotFound('resp_1'), { status: 404, type: 'invalid_request_error', code: 'previous_response_not_found', param: 'previous_response_id' }],
  [new ConflictError('clash', 'batch_id', 'batch_not_cancellable'), { status: 409, type: 'invalid_request_error', code: 'batch_not_cancellable', param: 'batch_id' }],
  [new DuplicateIdError('response', 'resp_1'), { status: 409, type: 'invalid_request_error', code: 'duplicate_response_id' }],
  [new TooLargeError('too big', 'file', 'file_too_large'), { status: 413, type: 'invalid_request_error', code: 'file_too_large', param: 'file' }],
  [new UnsupportedMediaTypeError('not JSON', null), { status: 415, type: 'invalid_request_error', code: 'unsupported_media_type' }],
  [new RateLimitError('slow down', 'rate_limit_exceeded', 7), { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', headers: { 'retry-after': '7' } }],
  [new TooManyInFlightError('wait', null, 'too_many_batches'), { status: 429, type: 'invalid_request_error', code: 'too_many_batches' }],
  [new TooManyConnectionsError('close some'), { status: 429, type: 'invalid_request_error', code: 'too_many_connections' }],
  [new ClientClosedError('went away'), { status: 499, type: 'invalid_request_error', code: 'client_closed_request' }],
  [new UpstreamUnavailableError('refused'), { status: 502, type: 'upstream_error', code: 'upstream_unavailable' }],
  [new UpstreamHttpError('upstream 404', 404), { status: 404, type: 'invalid_request_error', code: 'upstream_404' }],
  [new UpstreamHttpError('upstream 429', 429, '3'), { status: 429, type: 'invalid_request_error', code: 'upstream_429', headers: { 'retry-after': '3' } }],
  [new UpstreamHttpError('upstream 500', 500), { status: 502, type: 'upstream_error', code: 'upstream_500' }],
  [new UpstreamHttpError('upstream 302', 302), { status: 502, type: 'invalid_request_error', code: 'upstream_302' }],
  [
    new ContextLengthExceededError('too long', 400, { inputTokens: 9, outputTokens: null, contextLength: 8 }),
    { status: 400, type: 'invalid_request_error', code: 'context_length_exceeded', param: 'input' },
  ],
  [new UnavailableError('elsewhere', 'container_home_unreachable'), { status: 503, type: 'server_error', code: 'container_home_unreachable', headers: {} }],
  [new StoreUnavailableError(), { status: 503, type: 'server_error', code: 'store_unavailable', headers: { 'retry-after': '5' } }],
  [new LimitsUnavailableError('redis down'), { status: 503, type: 'server_error', code: 'limits_unavailable', headers: { 'retry-after': '1' } }],
  [new PrimaryLimitsUnavailableError('no answer'), { status: 503, type: 'server_error', code: 'limits_unavailable', headers: { 'retry-after': '1' } }],
  [new IdentityProviderUnavailableError('timeout'), { status: 503, type: 'server_error', code: 'oidc_unavailable', headers: { 'retry-after': '5' } }],
  [new GatewayDrainingError(), { status: 503, type: 'server_error', code: 'gateway_draining' }],
  [new GatewayShutdownError(100), { status: 503, type: 'server_error', code: 'gateway_shutdown' }],
  [new DriverMissingError('pg', 'postgres'), { status: 503, type: 'server_error', code: 'driver_missing', headers: {} }],
  [new UpstreamTimeoutError('slow'), { status: 504, type: 'timeout_error', code: 'upstream_timeout' }],
  [new UnlistedError('odd', 'module_failure'), { status: 500, type: 'server_error', code: 'module_failure' }],
];

describe('the error kinds table: every domain error class to its status, type and code', () => {
  it.each(CASES.map(([err, want]) => [err.name, err, want] as const))('%s', (_name, err, want) => {
    const { status, body, headers } = toErrorEnvelope(err);
    expect(status).toBe(want.status);
    expect(body).toEqual({ error: { message: err.message, type: want.type, param: want.param ?? null, code: want.code } });
    if (want.headers) expect(headers).toEqual(want.headers);
  });

  it('lists every error class the SDK exports, each tried above', () => {
    const exported = (Object.values(domain) as unknown[]).filter((v): v is typeof GatewayError => typeof v === 'function' && v.prototype instanceof GatewayError);
    const tried = new Set<unknown>(CASES.map(([err]) => err.constructor));
    expect(exported.filter((cls) => !tried.has(cls)).map((cls) => cls.name)).toEqual([]);
    // A kind of its own is a row of its own; subclasses of a kind inherit it.
    for (const cls of exported) {
      const kind = [...ERROR_KINDS.keys()].find((k) => (cls as unknown) === k || cls.prototype instanceof k);
      expect(kind).toBeDefined();
    }
  });

  it('keeps HTTP out of the errors themselves: no status, no envelope type', () => {
    for (const [err] of CASES) {
      expect(err).not.toHaveProperty('status');
      expect(err).not.toHaveProperty('type');
    }
  });

  it('gives the broker reply and the Anthropic envelope the same status as HTTP', () => {
    for (const [err, want] of CASES) {
      expect(toRpcError(err).status).toBe(want.status);
      expect(toAnthropicError(err).status).toBe(err instanceof ContextLengthExceededError ? 400 : want.status);
    }
  });
});

describe("a domain error made by a plugin's own copy of the package", () => {
  // Another copy's classes: the same names and the same global mark, none of them this copy's.
  abstract class CopiedGatewayError extends Error {
    readonly headers: Record<string, string> = {};
    constructor(
      message: string,
      readonly code: string | null = null,
      readonly param: string | null = null,
    ) {
      super(message);
    }
  }
  Object.defineProperty(CopiedGatewayError, 'name', { value: 'GatewayError' });
  Object.defineProperty(CopiedGatewayError.prototype, Symbol.for('switchyard-gateway:domain-error'), { value: true });
  class CopiedInvalidRequestError extends CopiedGatewayError {}
  Object.defineProperty(CopiedInvalidRequestError, 'name', { value: 'InvalidRequestError' });

  it('gets the status and envelope of the class of its name, not a 500', () => {
    const err = new CopiedInvalidRequestError('tools[0].sides must be an integer.', null, 'tools[0].sides');
    expect(err).not.toBeInstanceOf(GatewayError);
    expect(domain.isGatewayError(err)).toBe(true);
    expect(toErrorEnvelope(err)).toMatchObject({
      status: 400,
      body: { error: { type: 'invalid_request_error', param: 'tools[0].sides', message: 'tools[0].sides must be an integer.' } },
    });
  });

  it('leaves an unmarked error of the same name a server error', () => {
    class InvalidRequestError extends Error {}
    expect(domain.isGatewayError(new InvalidRequestError('x'))).toBe(false);
    expect(toErrorEnvelope(new InvalidRequestError('x')).status).toBe(500);
  });
});
