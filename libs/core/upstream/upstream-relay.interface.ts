import type { IncomingMessage } from 'node:http';
import type { FlowGate } from '../protocol/flow-gate.js';
import type { JsonObject, Usage } from '#tool-sdk/items.js';

/** The OpenAI-compatible routes the gateway passes to its model servers as the client wrote them. */
export type RelayPath = '/chat/completions' | '/completions' | '/embeddings';

/** One pass-through call: the client's body, sent unchanged to one model server of `model`. */
export interface RelayCall {
  path: RelayPath;
  body: JsonObject;
  model: string;
  /** Which server's prefix cache this call belongs to (see the pool's affinity); the same key goes to the same server. */
  affinityKey: string;
  stream: boolean;
  signal?: AbortSignal;
  /** While paused, the body is not read: the client downstream is slower than the model. */
  flow?: FlowGate;
  headers?: Readonly<Record<string, string>>;
}

/** A successful upstream answer (status < 400) whose body has not been read; an error status rejects `relay` with a GatewayError. */
export interface RelayBody {
  readonly status: number;
  readonly contentType: string;
  json(): Promise<unknown>;
  /** The body as decoded text chunks, as they arrive, until it ends. */
  text(onText: (chunk: string) => void): Promise<void>;
}

/** An upstream client that can pass OpenAI-compatible calls through (the built-in dialect clients and the pool can). */
export interface RelayingUpstream {
  relay(call: RelayCall): Promise<RelayBody>;
}

export function canRelay(client: unknown): client is RelayingUpstream {
  return !!client && typeof (client as Partial<RelayingUpstream>).relay === 'function';
}

/**
 * What a pass-through surface tells an observer (log line, metrics, the
 * upstream span) about one relayed call. Provided under `RELAY_OBSERVER` by
 * the observability module; without one the call is unobserved.
 */
export const RELAY_OBSERVER = Symbol('RELAY_OBSERVER');

export interface RelayObserver {
  /**
   * `served` is the HTTP request the call answers (a batch's call has none);
   * `headers` carry the W3C trace context to the model server. `owner` and
   * `surface` are whom and where the call's tokens count for.
   */
  begin(call: { path: RelayPath; model: string; stream: boolean; owner: string | null; surface: string; served?: IncomingMessage }): RelayTrace;
}

export interface RelayTrace {
  readonly headers: Record<string, string>;
  /** `error` is the GatewayError the call failed with; `cancelled` when the client left first. */
  end(outcome: { error?: unknown; cancelled?: boolean; usage?: Usage | null }): void;
}
