import type { Registry } from 'prom-client';
import { ObservabilityConfig } from '../config/observability.config-section.js';
import { draws } from '../testing/draws.js';
import { GatewayMetrics } from './gateway-metrics.service.js';

/** The gateway's own series (Node's process metrics left out: they move on their own). */
async function gatewaySeries(registry: Registry): Promise<string> {
  const texts = await Promise.all(
    registry
      .getMetricsAsArray()
      .filter((metric) => metric.name.startsWith('switchyard_'))
      .map((metric) => registry.getSingleMetricAsString(metric.name)),
  );
  return texts.join('\n');
}

interface Request {
  method: string;
  route: string;
  status: number | undefined;
  seconds: number;
  upstream: string;
  tool?: { type: string; outcome: string };
  stream: boolean;
  rounds: number;
  broker?: string;
  store?: { operation: string; driver: string; failed: boolean };
}

/** What one request records through the gateway's methods. */
function viaSeries(metrics: GatewayMetrics, r: Request): void {
  metrics.recordFirstEvent(r.stream, r.seconds / 3);
  metrics.recordUpstreamCall(r.upstream, r.seconds / 2);
  if (r.tool) metrics.recordToolCall(r.tool.type, r.tool.outcome, r.seconds / 4);
  if (r.store) metrics.recordStoreOperation(r.store.operation, r.store.driver, r.store.failed, r.seconds / 100);
  if (r.rounds > 0) metrics.recordRounds(r.rounds);
  if (r.broker) metrics.recordBrokerRequest(r.broker, r.status);
  metrics.recordHttpRequest(r.method, r.route, r.status, r.seconds);
}

/** The same request through labelled `inc`/`observe` calls, as the observers made them before the series were kept. */
function viaLabels(metrics: GatewayMetrics, r: Request): void {
  metrics.firstEvent.observe({ stream: String(Boolean(r.stream)) }, r.seconds / 3);
  metrics.upstreamRequests.inc({ status: r.upstream });
  metrics.upstreamDuration.observe({ status: r.upstream }, r.seconds / 2);
  if (r.tool) {
    metrics.toolCalls.inc({ type: r.tool.type, outcome: r.tool.outcome });
    metrics.toolDuration.observe({ type: r.tool.type, outcome: r.tool.outcome }, r.seconds / 4);
  }
  if (r.store) metrics.storeDuration.observe({ operation: r.store.operation, driver: r.store.driver, outcome: r.store.failed ? 'error' : 'ok' }, r.seconds / 100);
  if (r.rounds > 0) metrics.rounds.observe(r.rounds);
  if (r.broker) metrics.brokerRequests.inc({ pattern: r.broker, status: String(r.status) });
  const labels = { method: r.method, route: r.route, status: String(r.status) };
  metrics.httpRequests.inc(labels);
  metrics.httpDuration.observe(labels, r.seconds);
}

/** A varied but fixed mix: every label takes several values, durations land in different buckets and past the last. */
function requests(count: number, seed: number): Request[] {
  const draw = draws(seed);
  const pick = <T>(values: readonly T[]): T => values[draw(values.length)];
  return Array.from({ length: count }, () => ({
    method: pick(['POST', 'GET', 'DELETE']),
    route: pick(['/v1/responses', '/v1/responses/:id', '/v1/chat/completions', '(unmatched)']),
    status: pick([200, 200, 400, 499, 500, undefined]),
    seconds: pick([0, 0.001, 0.004, 0.02, 0.3, 1, 7.5, 400]),
    upstream: pick(['200', '429', 'timeout', 'unreachable', 'cancelled']),
    tool: draw(3) === 0 ? undefined : { type: pick(['mcp', 'web_search', 'function']), outcome: pick(['completed', 'failed', 'cancelled']) },
    stream: draw(2) === 0,
    rounds: pick([0, 1, 2, 3, 9, 70]),
    broker: draw(4) === 0 ? pick(['switchyard.responses.create', 'switchyard.responses.stream']) : undefined,
    store: draw(5) === 0 ? undefined : { operation: pick(['save', 'load', 'delete']), driver: pick(['sqlite', 'postgres']), failed: draw(7) === 0 },
  }));
}

describe('GatewayMetrics', () => {
  it('records requests into the same exposition the labelled calls make, before and after a reset', async () => {
    const kept = new GatewayMetrics(new ObservabilityConfig());
    const labelled = new GatewayMetrics(new ObservabilityConfig());
    for (const r of requests(400, 1)) {
      viaSeries(kept, r);
      viaLabels(labelled, r);
    }
    const before = await gatewaySeries(labelled.registry);
    expect(await gatewaySeries(kept.registry)).toBe(before);
    expect(before).toContain('switchyard_http_requests_total{method="DELETE",route="/v1/chat/completions",status="undefined"}');
    expect(before).toMatch(/switchyard_gateway_tool_call_duration_seconds_count\{type="web_search",outcome="failed"\} [1-9]/);
    expect(before).toMatch(/switchyard_store_operation_duration_seconds_count\{operation="save",driver="sqlite",outcome="error"\} [1-9]/);

    kept.registry.resetMetrics();
    labelled.registry.resetMetrics();
    expect(await gatewaySeries(kept.registry)).toBe(await gatewaySeries(labelled.registry));
    // Fewer requests, starting elsewhere in the mix: series first seen in another order, some never again.
    for (const r of requests(97, 2)) {
      viaSeries(kept, r);
      viaLabels(labelled, r);
    }
    const after = await gatewaySeries(labelled.registry);
    expect(await gatewaySeries(kept.registry)).toBe(after);
    expect(after).toMatch(/switchyard_http_requests_total\{method="POST",route="\/v1\/responses",status="200"\} [1-9]/);
  });
});
