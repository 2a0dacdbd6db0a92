import { MemoryUsageStore } from '#storage/usage/memory-usage.store.js';
import { ObservabilityConfig } from '../config/observability.config-section.js';
import { LogWriter } from '../logging/log-writer.service.js';
import { RequestLog } from '../logging/request-log.service.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.service.js';
import { TracingService } from '../tracing/tracing.service.js';
import { UsageRecorder } from '../usage/usage-recorder.service.js';
import { RunTelemetry } from './run-telemetry.observer.js';

const usage = (input: number, output: number) => ({
  input_tokens: input,
  output_tokens: output,
  total_tokens: input + output,
  input_tokens_details: { cached_tokens: 1 },
  output_tokens_details: { reasoning_tokens: 2 },
});

function telemetry() {
  const settings = Object.assign(new ObservabilityConfig(), { logFormat: 'json' as const });
  const lines: any[] = [];
  const writer = new LogWriter(settings, { write: (line: string) => lines.push(JSON.parse(line)) });
  const tracing = new TracingService(settings);
  const metrics = new GatewayMetrics(settings);
  const store = new MemoryUsageStore();
  const recorder = new UsageRecorder(writer, store);
  return { observer: new RunTelemetry(metrics, tracing, new RequestLog(writer, tracing, settings), recorder), lines, metrics, store, recorder };
}

const brokerRun = { model: 'm', stream: true, owner: 'f'.repeat(64), edge: { method: 'RPC', path: 'switchyard.responses.create' } } as any;

describe('RunTelemetry', () => {
  it('names a broker run cancelled before its first event by the response id it was given', () => {
    const { observer, lines, metrics } = telemetry();
    observer.begin(brokerRun, 'resp_cancelled1').end({ cancelled: true });
    expect(lines).toEqual([expect.objectContaining({ method: 'RPC', path: 'switchyard.responses.create', response_id: 'resp_cancelled1', response_status: 'cancelled' })]);
    return metrics.registry
      .getSingleMetricAsString('switchyard_broker_requests_total')
      .then((text) => expect(text).toContain('pattern="switchyard.responses.create",status="200"} 1'));
  });

  it('counts the rounds a cancelled run finished, in the line, the metrics and the usage store', async () => {
    const { observer, lines, metrics, store, recorder } = telemetry();
    const run = observer.begin(brokerRun, 'resp_cut');
    const first = run.round(1);
    first.usage!(usage(40, 10));
    first.end();
    const second = run.round(2);
    second.usage!(null); // cut short before the upstream reported anything
    second.end();
    run.end({ cancelled: true });
    expect(lines[0]).toMatchObject({ response_id: 'resp_cut', input_tokens: 40, output_tokens: 10, cached_input_tokens: 1, reasoning_tokens: 2 });
    const text = await metrics.registry.getSingleMetricAsString('switchyard_tokens_total');
    expect(text).toContain('model="m",kind="input",surface="broker"} 40');
    expect(text).toContain('model="m",kind="output",surface="broker"} 10');
    await recorder.settled();
    expect(await store.query({ from: 0, to: Date.now() + 60_000, bucketMs: 86_400_000, limit: 10 })).toMatchObject([
      { owner: brokerRun.owner, surface: 'broker', requests: 1, inputTokens: 40 },
    ]);
  });

  it('takes the terminal response’s usage (all rounds) over the rounds it saw, and counts a run once', async () => {
    const { observer, lines, metrics } = telemetry();
    const run = observer.begin({ ...brokerRun, edge: { method: 'BACKGROUND', path: '/v1/responses' } }, 'resp_done');
    const round = run.round(1);
    round.usage!(usage(5, 5));
    round.end();
    run.event({ type: 'response.completed', response: { id: 'resp_done', status: 'completed', usage: usage(30, 7) } } as any);
    run.end({});
    run.end({});
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ method: 'BACKGROUND', response_id: 'resp_done', input_tokens: 30, output_tokens: 7 });
    expect(await metrics.registry.getSingleMetricAsString('switchyard_tokens_total')).toContain('model="m",kind="input",surface="background"} 30');
  });

  it('admits a bounded number of model names as labels and counts the rest as (other)', async () => {
    const settings = Object.assign(new ObservabilityConfig(), { metricsMaxModels: 2 });
    const metrics = new GatewayMetrics(settings);
    for (const model of ['a', 'b', 'c', 'd', 'a']) metrics.tokens.count(model, 'responses', 'anonymous', { input: 1, cachedInput: 0, output: 1, reasoning: 0 });
    const text = await metrics.registry.getSingleMetricAsString('switchyard_tokens_total');
    expect(text).toContain('model="a",kind="input",surface="responses"} 2');
    expect(text).toContain('model="(other)",kind="input",surface="responses"} 2');
    expect(text).not.toContain('model="c"');
  });
});
