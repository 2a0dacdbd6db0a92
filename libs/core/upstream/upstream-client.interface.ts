import type { Observable } from 'rxjs';
import type { FlowGate } from '../protocol/flow-gate.js';
import type { FunctionToolDef, ModelItem } from '#tool-sdk/items.js';
import type { ModelEvent, ModelRequest } from '../protocol/model-events.js';

export const UPSTREAM_CLIENT = Symbol('UPSTREAM_CLIENT');

export interface ModelInfo {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  [key: string]: unknown;
}

/**
 * One upstream model server. `infer` returns a cold Observable that owns its
 * HTTP request: subscribing sends it, unsubscribing aborts it at once.
 * Errors are `GatewayError`s (502 unreachable/protocol, 504 timeout, upstream 4xx passed on).
 */
export interface InferOptions {
  /** While paused, the client stops reading the upstream's stream (a slow consumer downstream). */
  flow?: FlowGate;
  /** Who and what this call is for; a wrapping client may add headers here per request. */
  context?: UpstreamCallContext;
}

/**
 * Per-request facts an upstream call carries. The built-in clients send
 * `headers` with the HTTP request; a client wrapping them (see docs/plugins.md,
 * "Embedding it in a Nest application") can derive more from `owner` and `requestId`.
 */
export interface UpstreamCallContext {
  /** The inbound API key's identity (its SHA-256), or the owner a non-HTTP caller named; null without auth. */
  owner: string | null;
  /** The response id this call belongs to (`resp_...`). */
  requestId: string;
  /** Headers for the upstream request: the inbound headers named in `upstream.forwardHeaders`, lower-cased. */
  headers: Readonly<Record<string, string>>;
}

/** A prompt to count, in the loop's terms; the client renders it the way its server's `/tokenize` takes it. */
export interface TokenizeRequest {
  model: string;
  instructions: string | null;
  input: readonly ModelItem[];
  tools: readonly FunctionToolDef[];
}

export interface UpstreamClient {
  readonly dialect: 'responses' | 'chat';
  infer(request: ModelRequest, options?: InferOptions): Observable<ModelEvent>;
  listModels(signal?: AbortSignal): Promise<ModelInfo[]>;
  /** Resolves when the upstream answers; rejects with a GatewayError otherwise. */
  probe(signal?: AbortSignal): Promise<void>;
  /**
   * Prompt tokens as the model server counts them (vLLM's `/tokenize`), or
   * null when the server has no such route. Optional: clients without it
   * leave callers to estimate.
   */
  tokenize?(request: TokenizeRequest, signal?: AbortSignal): Promise<number | null>;
}
