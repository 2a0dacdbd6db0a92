import cluster from 'node:cluster';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { callPrimary, primaryOffers } from '#core/cluster/primary-channel.js';
import { OBSERVABILITY_SETTINGS, type ObservabilityConfig } from '../config/observability.config-section.js';
import { METRICS_SERVICE, exposeToPrimary } from './cluster-metrics.js';
import { TokenMetrics } from './token-metrics.js';

/** Seconds: from a fast JSON answer to a long generation. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const FAST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The gateway's Prometheus series. Each gateway instance has its own
 * registry (several can live in one process, as the tests do); labels are
 * bounded sets: route patterns, status codes, tool types, outcomes. In
 * worker mode a scrape answers with every worker's series merged by the
 * primary (`ClusterMetrics`), so totals never depend on which worker answers.
 */
@Injectable()
export class GatewayMetrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'switchyard_http_requests_total',
    help: 'HTTP requests by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'switchyard_http_request_duration_seconds',
    help: 'HTTP request duration (streams: until the stream ends).',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly brokerRequests = new Counter({
    name: 'switchyard_broker_requests_total',
    help: 'Broker (NATS, Redis) requests that ran, by pattern and the status HTTP would have sent.',
    labelNames: ['pattern', 'status'] as const,
    registers: [this.registry],
  });
  readonly firstEvent = new Histogram({
    name: 'switchyard_time_to_first_event_seconds',
    help: 'From the request to the first response event the loop produced.',
    labelNames: ['stream'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly rounds = new Histogram({
    name: 'switchyard_response_rounds',
    help: 'Inference rounds per response.',
    buckets: [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 50],
    registers: [this.registry],
  });
  readonly toolCalls = new Counter({
    name: 'switchyard_gateway_tool_calls_total',
    help: 'Gateway-executed tool calls by tool type and outcome (completed, failed, cancelled).',
    labelNames: ['type', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly toolDuration = new Histogram({
    name: 'switchyard_gateway_tool_call_duration_seconds',
    help: 'Gateway-executed tool call duration by tool type and outcome.',
    labelNames: ['type', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly upstreamRequests = new Counter({
    name: 'switchyard_upstream_requests_total',
    help: 'Inference calls to the upstream by status (HTTP status, or unreachable, timeout, bad_response, cancelled).',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  readonly upstreamDuration = new Histogram({
    name: 'switchyard_upstream_request_duration_seconds',
    help: 'Upstream inference call duration, to the end of its stream.',
    labelNames: ['status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly openStreams = new Gauge({
    name: 'switchyard_open_streams',
    help: 'Streaming responses in progress (SSE and WebSocket).',
    registers: [this.registry],
  });
  readonly openWebSockets = new Gauge({
    name: 'switchyard_open_websockets',
    help: 'Open WebSocket connections.',
    registers: [this.registry],
  });
  readonly storeDuration = new Histogram({
    name: 'switchyard_store_operation_duration_seconds',
    help: 'State store operations by operation, driver and outcome.',
    labelNames: ['operation', 'driver', 'outcome'] as const,
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });

  /** In worker mode: 1 per worker that answered the scrape (a worker that is gone is missing). */
  readonly workerUp = new Gauge({
    name: 'switchyard_worker_up',
    help: 'Gateway workers that answered this scrape, by cluster worker id (worker mode only).',
    labelNames: ['worker'] as const,
    registers: [this.registry],
  });

  /** Tokens by model and kind (and owner, when the operator asks for it). */
  readonly tokens: TokenMetrics;

  private readonly clustered = primaryOffers(METRICS_SERVICE);

  constructor(@Optional() @Inject(OBSERVABILITY_SETTINGS) settings?: ObservabilityConfig) {
    this.tokens = new TokenMetrics(this.registry, { ownerLabel: settings?.metricsOwnerLabel ?? false, maxModels: settings?.metricsMaxModels ?? 32 });
    collectDefaultMetrics({ register: this.registry });
    if (this.clustered) {
      this.workerUp.set({ worker: String(cluster.worker?.id ?? 0) }, 1);
      exposeToPrimary(this.registry);
    }
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition: this registry's, or in worker mode the whole gateway's. */
  async scrape(): Promise<string> {
    if (!this.clustered) return this.registry.metrics();
    const { text } = await callPrimary<{ text: string }>(METRICS_SERVICE, { op: 'scrape' }, 10_000);
    return text;
  }
}
