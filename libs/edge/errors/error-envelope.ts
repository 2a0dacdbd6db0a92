import { HttpException } from '@nestjs/common';
import type { Response } from 'express';
import { errorDetailOf, type GatewayError, isGatewayError } from '#tool-sdk/errors.js';
import { errorKind } from './error-kinds.js';

export interface ErrorEnvelope {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/**
 * Every error leaves the gateway in OpenAI's envelope. Body-parser failures,
 * Nest's own HTTP exceptions and domain errors all map here; anything else is
 * a 500 with a message that leaks nothing.
 */
export function toErrorEnvelope(err: unknown): { status: number; body: ErrorEnvelope; headers?: Record<string, string> } {
  if (isGatewayError(err)) return domainEnvelope(err);
  const e = err as { type?: string; status?: number; statusCode?: number; message?: string };
  if (e && typeof e === 'object' && typeof e.type === 'string' && (e.status ?? e.statusCode)) {
    const status = (e.status ?? e.statusCode) as number;
    if (e.type === 'entity.parse.failed') {
      return envelope(400, 'The request body is not valid JSON.', 'invalid_request_error', 'invalid_json');
    }
    if (e.type === 'entity.too.large') {
      const { limit, length } = e as { limit?: number; length?: number };
      const size = typeof length === 'number' && Number.isFinite(length) ? `${length} bytes` : 'larger than that';
      const cap = typeof limit === 'number' ? `${limit} bytes` : 'its limit';
      return envelope(
        413,
        `The request body is ${size}, over this gateway's limit of ${cap} (setting server.bodyLimitBytes, variable BODY_LIMIT_BYTES).`,
        'invalid_request_error',
        'request_too_large',
      );
    }
    if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') {
      return envelope(415, 'The request body encoding is not supported; send UTF-8 JSON.', 'invalid_request_error', 'unsupported_encoding');
    }
    if (status >= 400 && status < 500) return envelope(status, e.message ?? 'Bad request.', 'invalid_request_error', e.type);
  }
  // A body that does not decompress (`Content-Encoding: gzip` over plain bytes) reaches here from
  // body-parser as a zlib error with a 4xx status and `expose` set, but no `type`.
  const exposed = e as { expose?: unknown; status?: unknown; message?: unknown } | null;
  if (exposed && typeof exposed === 'object' && exposed.expose === true && typeof exposed.status === 'number' && exposed.status >= 400 && exposed.status < 500) {
    return envelope(exposed.status, `The request body could not be read: ${String(exposed.message ?? 'bad encoding')}.`, 'invalid_request_error', 'invalid_body');
  }
  if (err instanceof HttpException) {
    const status = err.getStatus();
    // Nest's router says "Cannot GET /path"; keep the method and path, which is what the caller needs to see.
    const unrouted = /^Cannot (\S+) (\S+)$/.exec(err.message);
    const message = status !== 404 ? err.message : unrouted ? noRouteMessage(unrouted[1], unrouted[2].split('?')[0]) : 'Not found.';
    return envelope(status, message, status >= 500 ? 'server_error' : 'invalid_request_error', status === 404 ? 'not_found' : null);
  }
  return envelope(500, 'The gateway hit an unexpected error.', 'server_error', 'internal_error');
}

/** A domain error's answer: status and type from the one table (error-kinds.ts), the rest from the error. */
function domainEnvelope(err: GatewayError): { status: number; body: ErrorEnvelope; headers: Record<string, string> } {
  const { status, type } = errorKind(err);
  return { status, body: { error: { message: err.message, type, param: err.param, code: err.code } }, headers: err.headers };
}

/**
 * What an unrouted request should have been. `GET /v1/responses` is the
 * usual one: the Responses API has no list (a GET there is only the
 * WebSocket mode's upgrade), a response is created by POST and read back by its id.
 */
export function noRouteMessage(method: string, path: string): string {
  if (/^\/v1\/responses\/?$/.test(path)) {
    const socket = method === 'GET' ? ' without a WebSocket upgrade (with one it is the WebSocket mode)' : '';
    return `${method} ${path}${socket} is not a route: create a response with POST /v1/responses, and read a stored one with GET /v1/responses/{response_id}.`;
  }
  return `No route for ${method} ${path} on this gateway (responses are created with POST /v1/responses; GET /openapi.json lists every route).`;
}

function envelope(status: number, message: string, type: string, code: string | null): { status: number; body: ErrorEnvelope } {
  return { status, body: { error: { message, type, param: null, code } } };
}

/**
 * Leaves the error's code and param (fixed strings and field names, never
 * the message) on `res.locals`, where the request log picks them up.
 */
export function noteErrorForLog(res: Response, err: unknown): void {
  const { body } = toErrorEnvelope(err);
  if (!res.locals) return;
  res.locals.errorCode = body.error.code ?? body.error.type;
  res.locals.errorParam = body.error.param ?? undefined;
  res.locals.errorDetail = errorDetailOf(err) ?? undefined;
}

/** Writes the envelope as the HTTP answer, with the headers that belong to the error. */
export function sendErrorEnvelope(res: Response, err: unknown): void {
  noteErrorForLog(res, err);
  const { status, body, headers } = toErrorEnvelope(err);
  for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
  res.status(status).json(body);
}
