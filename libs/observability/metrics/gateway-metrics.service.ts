import cluster from 'node:cluster';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { callPrimary, primaryOffers } from '#core/cluster/primary-channel.js';
import { OBSERVABILITY_SETTINGS, type ObservabilityConfig } from '../config/observability.config-section.js';
import { HistogramSeries, CounterSeries, TimedSeries } from './bound-series.js';
import { METRICS_SERVICE, exposeToPrimary } from './cluster-metrics.js';
import { SeriesCache } from './series-cache.js';
import { TokenMetrics } from './token-metrics.js';

/** Seconds: from a fast JSON answer to a long generation. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const FAST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * Series kept ready per label value for the per-request records below. Their
 * labels are bounded by the code (route patterns, the methods Node's parser
 * accepts, statuses, tool types, broker patterns, store operations), so this
 * only caps a surprise; values past it still count (see `SeriesCache`).
 */
const KEPT_PER_LABEL = 256;

const byLabel = <K, V>(make: (value: K) => V) => new SeriesCache(KEPT_PER_LABEL, make);

/**
 * The gateway's Prometheus series. Each gateway instance has its own
 * registry (several can live in one process, as the tests do); labels are
 * bounded sets: route patterns, status codes, tool types, outcomes. In
 * worker mode a scrape answers with every worker's series merged by the
 * primary (`ClusterMetrics`), so totals never depend on which worker answers.
 *
 * The request path records through the `record*` methods, which keep one
 * bound series per label combination (`bound-series.ts`) instead of handing
 * prom-client a labels object to key and check on every request.
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

  private readonly http = byLabel((route: string) =>
    byLabel((method: string) => byLabel((status: number | undefined) => new TimedSeries(this.httpRequests, this.httpDuration, { method, route, status: String(status) }))),
  );
  private readonly upstream = byLabel((status: string) => new TimedSeries(this.upstreamRequests, this.upstreamDuration, { status }));
  private readonly tools = byLabel((type: string) => byLabel((outcome: string) => new TimedSeries(this.toolCalls, this.toolDuration, { type, outcome })));
  private readonly broker = byLabel((pattern: string) => byLabel((status: number | undefined) => new CounterSeries(this.brokerRequests, { pattern, status: String(status) })));
  private readonly store = byLabel((operation: string) =>
    byLabel((driver: string) => ({
      ok: new HistogramSeries(this.storeDuration, { operation, driver, outcome: 'ok' }),
      error: new HistogramSeries(this.storeDuration, { operation, driver, outcome: 'error' }),
    })),
  );
  private readonly firstEventStreamed = new HistogramSeries(this.firstEvent, { stream: 'true' });
  private readonly firstEventAnswered = new HistogramSeries(this.firstEvent, { stream: 'false' });
  private readonly roundsSeries = new HistogramSeries(this.rounds, {});

  constructor(@Optional() @Inject(OBSERVABILITY_SETTINGS) settings?: ObservabilityConfig) {
    this.tokens = new TokenMetrics(this.registry, { ownerLabel: settings?.metricsOwnerLabel ?? false, maxModels: settings?.metricsMaxModels ?? 32 });
    collectDefaultMetrics({ register: this.registry });
    if (this.clustered) {
      this.workerUp.set({ worker: String(cluster.worker?.id ?? 0) }, 1);
      exposeToPrimary(this.registry);
    }
  }

  /** One HTTP exchange, when it ended (a stream's too), under its route pattern. */
  recordHttpRequest(method: string, route: string, status: number | undefined, seconds: number): void {
    this.http.of(route).of(method).of(status).record(seconds);
  }

  /** One inference call to the upstream, by how it ended (`upstreamStatusOf`). */
  recordUpstreamCall(status: string, seconds: number): void {
    this.upstream.of(status).record(seconds);
  }

  recordToolCall(type: string, outcome: string, seconds: number): void {
    this.tools.of(type).of(outcome).record(seconds);
  }

  recordFirstEvent(stream: boolean, seconds: number): void {
    (stream ? this.firstEventStreamed : this.firstEventAnswered).observe(seconds);
  }

  recordRounds(rounds: number): void {
    this.roundsSeries.observe(rounds);
  }

  /** A broker request, with the status HTTP would have sent. */
  recordBrokerRequest(pattern: string, status: number | undefined): void {
    this.broker.of(pattern).of(status).inc();
  }

  recordStoreOperation(operation: string, driver: string, failed: boolean, seconds: number): void {
    const series = this.store.of(operation).of(driver);
    (failed ? series.error : series.ok).observe(seconds);
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
