import { Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import type { StoreObserver } from '#storage/store-observer.js';
import { requestContext } from '../context/request-record.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.service.js';
import { TracingService } from '../tracing/tracing.service.js';

/** Store latency by operation, and a span per operation under the request that made it. */
@Injectable()
export class StoreTelemetry implements StoreObserver {
  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly tracing: TracingService,
  ) {}

  operation(name: string, driver: string): (outcome: { error?: unknown }) => void {
    const record = requestContext.getStore();
    const span = this.tracing.start(`store ${name}`, this.tracing.contextOf(record?.span, record?.traceContext), {
      'db.operation.name': name,
      'db.system.name': driver,
    });
    const started = performance.now();
    return ({ error }) => {
      this.metrics.recordStoreOperation(name, driver, Boolean(error), (performance.now() - started) / 1000);
      this.tracing.end(span, error ? { code: (error as { code?: string }).code ?? 'store_error' } : null);
    };
  }
}
