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
 * The patterns under a prefix, for several gateways, or several test runs, on
 * one broker. A prefix that does not end in a separator (`.`, `:`, `-`, `_`, `/`)
 * gets a `.`: `extender` and `extender.` both give `extender.responses.create`.
 */
export function responsesPatterns(prefix = ''): ResponsesPatterns {
  const head = prefix === '' || /[.:\-_/]$/.test(prefix) ? prefix : `${prefix}.`;
  return {
    create: head + RESPONSES_PATTERNS.create,
    stream: head + RESPONSES_PATTERNS.stream,
    cancel: head + RESPONSES_PATTERNS.cancel,
  };
}

/**
 * Nest token of the patterns a `GatewayMicroserviceModule` serves: its `forRoot({ prefix })`,
 * else `transports.patternPrefix`. `connectGatewayTransports` takes the Redis lease for these,
 * so the lease always covers what is served.
 */
export const SERVED_RESPONSES_PATTERNS = Symbol.for('switchyard.ServedResponsesPatterns');

/**
 * The one prefix a gateway serves: the module's `forRoot({ prefix })` or the config's
 * `transports.patternPrefix`. Both set and different is refused, since a lease taken
 * for one and patterns served under the other would let two gateways run one request.
 */
export function servedPatterns(modulePrefix: string | undefined, configPrefix: string | undefined): ResponsesPatterns {
  const fromModule = modulePrefix ? responsesPatterns(modulePrefix) : undefined;
  const fromConfig = configPrefix ? responsesPatterns(configPrefix) : undefined;
  if (fromModule && fromConfig && fromModule.create !== fromConfig.create) {
    throw new Error(
      `GatewayMicroserviceModule.forRoot({ prefix: '${modulePrefix}' }) and transports.patternPrefix (TRANSPORT_PATTERN_PREFIX) '${configPrefix}' differ; set the prefix in one place.`,
    );
  }
  return fromModule ?? fromConfig ?? RESPONSES_PATTERNS;
}

/** The frame a run's stream carries while it is alive but has nothing else to say; the client package drops it. */
export const HEARTBEAT_TYPE = 'switchyard.heartbeat';
export interface HeartbeatFrame {
  type: typeof HEARTBEAT_TYPE;
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
  /** Ask for heartbeat frames (`switchyard.heartbeat`) while the run is alive, so a dead gateway is seen by silence. */
  heartbeat?: boolean;
  /** The caller's API key or OIDC token, checked as HTTP's `Authorization: Bearer` is when the gateway has keys or OIDC set. */
  apiKey?: string;
}

/** The data of a `responses.cancel` event. */
export interface ResponsesRpcCancel {
  runId: string;
}
