import { Injectable } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { InteractiveLoad } from '#tool-sdk/ports/interactive-load.js';
import { requestOwner } from '#tool-sdk/routes/request-owner.js';
import { DrainState } from '../lifecycle/drain-state.service.js';
import { RequestLog } from '../logging/request-log.service.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.service.js';
import { TracingService } from '../tracing/tracing.service.js';
import { RECORD_PROPERTY, RequestRecord, recordOf, requestContext } from './request-record.js';

const UNTRACED = new Set(['/metrics', '/health', '/ready']);

/** The routes a client waits on a model for: what background work steps aside for (`InteractiveLoad`). */
const MODEL_ROUTES = new Set(['/v1/responses', '/v1/messages', '/v1/chat/completions', '/v1/completions', '/v1/embeddings']);

/**
 * The HTTP edge of observability, as two express middlewares around the body
 * parser: `open()` first, so that a body the parser refuses (413, bad JSON)
 * is logged and counted too; `enter()` after it, to make the record the
 * current one for everything the route does (the parser resumes from a
 * socket callback, which would lose the context).
 */
@Injectable()
export class RequestTelemetry implements InteractiveLoad {
  private readonly open = new Set<RequestRecord>();
  private readonly idleWaiters = new Set<() => void>();
  private readonly interactive = new Set<RequestRecord>();
  private readonly interactiveIdle = new Set<() => void>();
  lastInteractiveEndedAt = 0;

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly tracing: TracingService,
    private readonly log: RequestLog,
    private readonly drain: DrainState,
  ) {}

  /** Requests in progress, for the graceful drain. */
  get inFlight(): number {
    return this.open.size;
  }

  /** Model requests in progress (see `InteractiveLoad`). */
  get interactiveInFlight(): number {
    return this.interactive.size;
  }

  onInteractiveIdle(listener: () => void): () => void {
    this.interactiveIdle.add(listener);
    return () => this.interactiveIdle.delete(listener);
  }

  /** Resolves when no request is in progress. */
  idle(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.add(resolve));
  }

  openMiddleware(): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      // Read once: express parses it from the URL on each read.
      const path = req.path;
      const record = new RequestRecord(req.method, path, req);
      (req as unknown as Record<symbol, RequestRecord>)[RECORD_PROPERTY] = record;
      const incoming = this.tracing.extract(req.headers);
      if (incoming) {
        record.incomingTrace = incoming.headers;
        record.traceContext = incoming.context;
      }
      // Scrapes and probes come every few seconds and say nothing about the traffic: no span.
      if (this.tracing.enabled && !UNTRACED.has(path)) record.span = this.tracing.start(`${req.method}`, incoming?.context, { 'url.path': path }, SpanKind.SERVER);
      this.open.add(record);
      if (req.method === 'POST' && MODEL_ROUTES.has(path)) this.interactive.add(record);
      if (this.drain.draining) res.setHeader('Connection', 'close');
      let finished = false;
      const finish = (): void => {
        if (finished) return;
        finished = true;
        // A client that left before the answer was complete: nginx's convention.
        record.status = res.writableFinished ? res.statusCode : 499;
        // Set where errors are answered (`noteErrorForLog`); a run's own failure code was set by the loop's observer.
        record.errorCode ??= typeof res.locals?.errorCode === 'string' ? res.locals.errorCode : undefined;
        record.errorParam ??= typeof res.locals?.errorParam === 'string' ? res.locals.errorParam : undefined;
        record.errorDetail ??= typeof res.locals?.errorDetail === 'string' ? res.locals.errorDetail : undefined;
        this.record(record, req);
      };
      // `on`, not `once`: `finished` already makes the second call a no-op, and a response emits
      // each event once, so the wrappers `once` makes per listener would only be garbage.
      res.on('finish', finish);
      res.on('close', finish);
      if (this.drain.draining && path === '/ready') {
        // The load balancer should stop sending here while open requests finish.
        res.status(503).json({ status: 'draining' });
        return;
      }
      this.enter(record, next);
    };
  }

  enterMiddleware(): RequestHandler {
    return (req: Request, _res: Response, next: NextFunction) => {
      const record = recordOf(req);
      if (record) this.enter(record, next);
      else next();
    };
  }

  /**
   * Makes `record` the async context's current one, for spans that nothing
   * else parents (a store operation's): only while tracing is on. Once any
   * AsyncLocalStorage is entered, Node 20 calls a hook for every promise the
   * process makes, about a tenth of a plain request's CPU; the request log and
   * metrics find their record through the request a run serves instead.
   */
  private enter(record: RequestRecord, next: NextFunction): void {
    if (this.tracing.enabled) requestContext.run(record, next);
    else next();
  }

  private record(record: RequestRecord, req: Request): void {
    record.finished = true;
    const owner = requestOwner(req);
    record.owner = owner;
    this.metrics.recordHttpRequest(record.method, record.route(), record.status, record.elapsedMs() / 1000);
    this.log.finish(record, owner);
    this.open.delete(record);
    if (this.interactive.delete(record)) {
      this.lastInteractiveEndedAt = Date.now();
      if (this.interactive.size === 0) for (const listener of this.interactiveIdle) listener();
    }
    if (this.open.size === 0) {
      for (const resolve of this.idleWaiters) resolve();
      this.idleWaiters.clear();
    }
  }
}
