import { Injectable } from '@nestjs/common';
import { type Observable, defer, filter, last, map } from 'rxjs';
import { LoopService, TERMINAL_EVENTS } from '#core/loop/loop.service.js';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import { SERVED_REQUEST } from '#core/loop/response-request.js';
import type { IncomingMessage } from 'node:http';
import type { JsonObject } from '#tool-sdk/items.js';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import { upstreamHeaderProblem } from '#upstream/upstream-headers.js';
import { CreateResponseParser } from '../request/create-response.parser.js';

/** Who is calling, for a caller that is not an HTTP request. */
export interface ResponseCaller {
  /** The identity stored state is scoped to (what an API key maps to over HTTP); null for none. */
  owner?: string | null;
  /** Headers the upstream call carries, as `upstream.forwardHeaders` would pass on over HTTP. */
  headers?: Record<string, string>;
  /** The edge it came in by, for its log line (`{ method: 'RPC', path: <pattern> }`). */
  edge?: { method: string; path: string };
  /**
   * A host route's own HTTP request that this call answers: the run is then
   * part of that request's log line and metrics, as on the gateway's routes
   * (see `SERVED_REQUEST`).
   */
  served?: IncomingMessage;
}

/** The Responses API response object (`object: "response"`), as the HTTP route returns it. */
export type ResponseObject = JsonObject & { id: string; object: 'response'; status: string; output: JsonObject[] };

function withStream(body: unknown, stream: boolean): unknown {
  // Anything but an object is left for the parser to refuse with its usual message.
  return body && typeof body === 'object' && !Array.isArray(body) ? { ...(body as object), stream } : body;
}

/** The caller's upstream headers, lower-cased; one the transport cannot send is a 400 naming it. */
function upstreamHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  if (headers === undefined || headers === null) return {};
  if (typeof headers !== 'object' || Array.isArray(headers)) throw new InvalidRequestError("'headers' must be an object of strings.", 'headers');
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    const problem = upstreamHeaderProblem(key, value);
    if (problem) throw new InvalidRequestError(problem, `headers.${name}`);
    out[key] = value;
  }
  return out;
}

/**
 * The Responses API without HTTP: the same parser and the same loop as
 * `POST /v1/responses`, for a host's own code, queue consumers and the
 * microservice transports. Both methods are cold: nothing runs until
 * subscription, and unsubscribing cancels the run (the upstream request and
 * in-flight tool calls are aborted). A bad body fails the Observable with the
 * same `GatewayError` the HTTP route turns into a 400.
 */
@Injectable()
export class ResponsesService {
  constructor(
    private readonly parser: CreateResponseParser,
    private readonly loop: LoopService,
  ) {}

  /** The events, in order, exactly as the SSE stream carries them (`stream` is implied). */
  stream(body: unknown, caller: ResponseCaller = {}): Observable<ResponseStreamEvent> {
    return defer(() => this.loop.run(this.parse(body, true, caller)));
  }

  /** The final response object, as the JSON route returns it (`stream: false` is implied). */
  create(body: unknown, caller: ResponseCaller = {}): Observable<ResponseObject> {
    return defer(() => this.loop.run(this.parse(body, false, caller))).pipe(
      filter((event) => TERMINAL_EVENTS.has(event.type)),
      last(),
      map((event) => event.response as ResponseObject),
    );
  }

  private parse(body: unknown, stream: boolean, caller: ResponseCaller) {
    const request = this.parser.parse(withStream(body, stream), caller.owner ?? null);
    if (request.background) {
      // A background run outlives its caller and is followed over HTTP (GET ?stream=true); here the caller is the run's lifetime.
      throw new InvalidRequestError("'background' is served over HTTP only (POST /v1/responses); send the request without it.", 'background', 'unsupported_parameter');
    }
    request.forwardedHeaders = upstreamHeaders(caller.headers);
    if (caller.edge) request.edge = caller.edge;
    if (caller.served) request[SERVED_REQUEST] = caller.served;
    return request;
  }
}
