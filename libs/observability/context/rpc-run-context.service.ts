import { Injectable } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import { Observable } from 'rxjs';
import type { RpcRunContext } from '#responses/rpc/rpc-run-context.js';
import { TracingService } from '../tracing/tracing.service.js';
import { RequestRecord, requestContext } from './request-record.js';

/**
 * A broker request's record and span, entered as the async context around its
 * run (as `RequestTelemetry.enter` does over HTTP): the store operations the run
 * makes (reading history, saving the response) open their spans under the RPC
 * span, and the loop's observer adopts the record as the request's own. Only
 * while tracing is on, for the reason `enter` gives; without it the observer
 * makes the broker run's record itself.
 */
@Injectable()
export class RpcRunTelemetry implements RpcRunContext {
  constructor(private readonly tracing: TracingService) {}

  around<T>(pattern: string, run: Observable<T>): Observable<T> {
    if (!this.tracing.enabled) return run;
    return new Observable<T>((subscriber) => {
      const record = new RequestRecord('RPC', pattern);
      record.span = this.tracing.start(`RPC ${pattern}`, undefined, { 'rpc.method': pattern }, SpanKind.SERVER);
      const inner = requestContext.run(record, () => run.subscribe(subscriber));
      return () => {
        inner.unsubscribe();
        // Refused before its run began (a bad message, a wrong key): the loop's observer never ended it.
        if (!record.finished && !record.adopted) this.tracing.end(record.span, { code: 'not_run' });
      };
    });
  }
}
