/**
 * The message patterns the gateway serves over Nest microservice transports.
 * `create` answers with the final response; `stream` with the same events,
 * in the same order, as the SSE stream; `cancel` (an event) stops a run its
 * caller no longer wants, which aborts the upstream request.
 */
export const RESPONSES_PATTERNS: ResponsesPatterns = {
  create: 'responses.create',
  stream: 'responses.stream',
  cancel: 'responses.cancel',
};

export interface ResponsesPatterns {
  create: string;
  stream: string;
  cancel: string;
}

/**
 * The patterns under a prefix (`tenant-a.` gives `tenant-a.responses.create`),
 * for several gateways, or several test runs, on one broker.
 */
export function responsesPatterns(prefix = ''): ResponsesPatterns {
  return {
    create: prefix + RESPONSES_PATTERNS.create,
    stream: prefix + RESPONSES_PATTERNS.stream,
    cancel: prefix + RESPONSES_PATTERNS.cancel,
  };
}

/** The data of a `responses.create` / `responses.stream` message. */
export interface ResponsesRpcRequest {
  /** A `POST /v1/responses` body. */
  body: unknown;
  /** Who stored state is scoped to (an API key's identity over HTTP). */
  owner?: string | null;
  /** Headers the upstream call carries. */
  headers?: Record<string, string>;
  /** The caller's handle for this run, named again in `responses.cancel`. */
  runId?: string;
}

/** The data of a `responses.cancel` event. */
export interface ResponsesRpcCancel {
  runId: string;
}
