import type { Observable } from 'rxjs';
import type { FlowGate } from '../core/protocol/flow-gate.js';
import type { ModelEvent, ModelRequest } from '../core/protocol/model-events.js';

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
  /** Extra request headers for this call (W3C `traceparent` / `tracestate`); never credentials. */
  headers?: Record<string, string>;
}

export interface UpstreamClient {
  readonly dialect: 'responses' | 'chat';
  infer(request: ModelRequest, options?: InferOptions): Observable<ModelEvent>;
  listModels(signal?: AbortSignal): Promise<ModelInfo[]>;
  /** Resolves when the upstream answers; rejects with a GatewayError otherwise. */
  probe(signal?: AbortSignal): Promise<void>;
}
