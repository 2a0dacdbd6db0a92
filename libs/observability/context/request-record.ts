import type { Context, Span } from '@opentelemetry/api';
import type { Request } from 'express';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { TokenCounts } from '../run/token-usage.js';

/** Tool calls of one request: `{ mcp: { completed: 2, failed: 1 } }`. */
export type ToolCallCounts = Record<string, Record<string, number>>;

/**
 * What one request did, filled in as it goes (edge, loop, upstream, tools)
 * and written out once when it ends: the log line, the request metrics and
 * the request span all read it. It holds names, counts and outcomes only.
 */
export class RequestRecord {
  readonly startedAt = performance.now();
  status?: number;
  responseId?: string;
  responseStatus?: string;
  model?: string;
  stream?: boolean;
  rounds = 0;
  readonly toolCalls: ToolCallCounts = {};
  upstreamStatus?: string;
  errorCode?: string;
  /** The request field an error names (`temperature`, `tools[2].server_url`). */
  errorParam?: string;
  /** The operator-only detail of the error (an internal address, a transport's words): the log's, never the client's. */
  errorDetail?: string;
  firstEventMs?: number;
  /** Tokens the run used, summed over its rounds (set when the run ends with any). */
  tokens?: TokenCounts;
  /** The request span, when tracing is on. */
  span?: Span;
  /** Parent for child spans: the request span's context, or the client's when tracing is off. */
  traceContext?: Context;
  /** The client's W3C trace headers, passed on upstream as they are when the gateway does not trace. */
  incomingTrace?: Record<string, string>;
  /** A run outside HTTP (WebSocket mode, background) writes its own record when it ends. */
  readonly detached: boolean;
  /** Set once the HTTP exchange ended and its line was written. */
  finished = false;
  /** A broker request's record (entered around its run) that a run took as its own, which then ends it. */
  adopted = false;
  /** The owner for a record without a request of its own (a background run's, from the request that queued it). */
  owner?: string | null;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly req?: Request,
  ) {
    this.detached = !req;
  }

  elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  /** The matched route pattern (`/v1/responses/:id`), so labels and span names stay bounded. */
  route(): string {
    if (!this.req) return this.path;
    const route = (this.req as unknown as { route?: { path?: unknown } }).route;
    if (typeof route?.path === 'string') return route.path;
    // Refused before routing (body too large, not JSON): still the route it was sent to, if any.
    return (this.resolved ??= routeFor(this.req) ?? '(unmatched)');
  }

  private resolved?: string;

  countToolCall(type: string, outcome: string): void {
    const byOutcome = (this.toolCalls[type] ??= {});
    byOutcome[outcome] = (byOutcome[outcome] ?? 0) + 1;
  }
}

interface RouterLayer {
  route?: { path?: unknown; methods?: Record<string, boolean> };
  match?(path: string): boolean;
}

/** The pattern of the registered route a request would have reached. */
function routeFor(req: Request): string | undefined {
  const stack = (req.app as unknown as { router?: { stack?: RouterLayer[] } } | undefined)?.router?.stack ?? [];
  const method = req.method.toLowerCase();
  for (const layer of stack) {
    if (typeof layer.route?.path !== 'string' || !layer.route.methods?.[method]) continue;
    try {
      if (layer.match?.(req.path)) return layer.route.path;
    } catch {
      // A layer that cannot match this path is simply not the route.
    }
  }
  return undefined;
}

/**
 * The record of the request being served, as async context: entered after
 * body parsing while tracing is on (see `RequestTelemetry.enter`), so store
 * calls made on the request's behalf open their spans under its span.
 * Nothing else depends on it: runs and relayed calls find their request's
 * record through the request they serve (`SERVED_REQUEST`), and socket
 * callbacks would lose the context anyway, which is why the loop hands its
 * trace along explicitly.
 */
export const requestContext = new AsyncLocalStorage<RequestRecord>();

export const RECORD_PROPERTY = Symbol('switchyard.requestRecord');

export function recordOf(req: IncomingMessage): RequestRecord | undefined {
  return (req as unknown as Record<symbol, RequestRecord | undefined>)[RECORD_PROPERTY];
}

/**
 * The record of the HTTP request a run or relayed call answers (`SERVED_REQUEST`,
 * a relayed call's `served`), else the async context's, which is only entered while tracing is on.
 */
export function recordServing(served: IncomingMessage | undefined): RequestRecord | undefined {
  return (served && recordOf(served)) || requestContext.getStore();
}
