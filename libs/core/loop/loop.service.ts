import { Inject, Injectable, Optional } from '@nestjs/common';
import { Observable } from 'rxjs';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from '../upstream/upstream-client.interface.js';
import { conversationNotFound, previousResponseNotFound } from '../errors/gateway-error.js';
import { ToolHandlerExplorer } from '../handlers/tool-handler.explorer.js';
import { ToolPreparationService } from '../registry/tool-preparation.service.js';
import { GatewayScheduler } from './gateway-scheduler.service.js';
import type { ResponseStreamEvent } from './response-events.js';
import type { ResponseRequest } from './response-request.js';
import { RESPONSE_STATE, type ResponseStateStore } from './response-state.interface.js';
import { ResponseRun } from './response-run.js';
import { ModelContextService } from './model-context.service.js';
import { REQUEST_LIMITER, type RequestLease, type RequestLimiter } from './request-limiter.interface.js';
import type { Usage } from '../protocol/items.js';
import type { FlowGate } from '../protocol/flow-gate.js';
import { RUN_OBSERVER, type RunObserver } from './run-observer.interface.js';

/** Used when no state module is installed: nothing persists, so nothing can be continued. */
export class StatelessResponseState implements ResponseStateStore {
  async load(request: ResponseRequest) {
    if (request.previousResponseId) throw previousResponseNotFound(request.previousResponseId);
    if (request.conversationId) throw conversationNotFound(request.conversationId);
    return null;
  }

  async save(): Promise<void> {}
}

export const TERMINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * Runs requests through the tool loop. The result is a cold Observable of
 * public events: subscribing starts the run, unsubscribing (client gone)
 * aborts the upstream request and in-flight gateway calls.
 */
@Injectable()
export class LoopService {
  private readonly state: ResponseStateStore;

  constructor(
    @Inject(UPSTREAM_CLIENT) private readonly upstream: UpstreamClient,
    private readonly preparation: ToolPreparationService,
    private readonly scheduler: GatewayScheduler,
    private readonly explorer: ToolHandlerExplorer,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Optional() @Inject(RESPONSE_STATE) state?: ResponseStateStore,
    @Optional() private readonly contexts?: ModelContextService,
    @Optional() @Inject(REQUEST_LIMITER) private readonly limiter?: RequestLimiter | null,
    @Optional() @Inject(RUN_OBSERVER) private readonly observer?: RunObserver,
  ) {
    this.state = state ?? new StatelessResponseState();
  }

  run(request: ResponseRequest, options: { state?: ResponseStateStore; flow?: FlowGate } = {}): Observable<ResponseStreamEvent> {
    const limiter = this.limiter;
    if (!limiter) return this.execute(request, options);
    // Admission comes first: a request past its owner's limits never starts,
    // and its place is held until the run ends however it ends.
    return new Observable<ResponseStreamEvent>((subscriber) => {
      let lease: RequestLease | undefined;
      let usage: Usage | null = null;
      let inner: { unsubscribe(): void } | undefined;
      let closed = false;
      limiter.acquire(request.owner).then(
        (acquired) => {
          lease = acquired;
          if (closed) return lease.release(null);
          inner = this.execute(request, options).subscribe({
            next: (event) => {
              if (TERMINAL_EVENTS.has(event.type)) usage = ((event.response as { usage?: Usage } | undefined)?.usage ?? null) as Usage | null;
              subscriber.next(event);
            },
            error: (err: unknown) => {
              lease?.release(usage);
              subscriber.error(err);
            },
            complete: () => {
              lease?.release(usage);
              subscriber.complete();
            },
          });
        },
        (err: unknown) => subscriber.error(err),
      );
      return () => {
        closed = true;
        inner?.unsubscribe();
        lease?.release(usage);
      };
    });
  }

  private execute(request: ResponseRequest, options: { state?: ResponseStateStore; flow?: FlowGate }): Observable<ResponseStreamEvent> {
    return new Observable<ResponseStreamEvent>((subscriber) => {
      const controller = new AbortController();
      const trace = this.observer?.begin(request);
      const run = new ResponseRun(
        {
          upstream: this.upstream,
          preparation: this.preparation,
          scheduler: this.scheduler,
          explorer: this.explorer,
          config: this.config,
          state: options.state ?? this.state,
          reasoningEvents: this.config.server.reasoningEvents,
          flow: options.flow,
          trace,
          contexts: this.contexts,
        },
        request,
        (event) => {
          trace?.event(event);
          subscriber.next(event);
        },
        controller.signal,
      );
      let settled = false;
      // Once per run: a cancelled run still settles its promise after the teardown reported it.
      let traceEnded = false;
      const endTrace = (outcome: { error?: unknown; cancelled?: boolean }): void => {
        if (traceEnded) return;
        traceEnded = true;
        trace?.end(outcome);
      };
      run.execute().then(
        () => {
          settled = true;
          endTrace({ cancelled: controller.signal.aborted });
          subscriber.complete();
        },
        (err: unknown) => {
          settled = true;
          endTrace({ error: err });
          subscriber.error(err);
        },
      );
      // Only a run still going has anything to cancel; aborting a finished one
      // costs a DOMException (stack capture) and an abort dispatch per request.
      return () => {
        if (settled) return;
        controller.abort();
        endTrace({ cancelled: true });
      };
    });
  }
}
