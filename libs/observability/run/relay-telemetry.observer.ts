import { Injectable, Optional } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { RelayObserver, RelayPath, RelayTrace } from '#core/upstream/upstream-relay.interface.js';
import { recordServing } from '../context/request-record.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.service.js';
import { TracingService } from '../tracing/tracing.service.js';
import { UsageRecorder } from '../usage/usage-recorder.service.js';
import { countTokens } from './token-charge.js';
import { anyTokens, genAiUsageAttributes, tokensOf } from './token-usage.js';
import { errorCodeOf, errorDetailOf, upstreamStatusOf } from './upstream-status.util.js';

/**
 * The pass-through surfaces' observer: the request's log line gets the model,
 * whether it streamed, the upstream status and the tokens; the tokens count
 * in the token metrics and the usage store under the call's surface
 * (`chat_completions`, `completions`, `embeddings`, `batch`); the upstream counters and
 * durations are the loop's own series; and the call is an `upstream relay`
 * CLIENT span under the request span, whose context goes to the model server.
 */
@Injectable()
export class RelayTelemetry implements RelayObserver {
  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly tracing: TracingService,
    @Optional() private readonly usage?: UsageRecorder,
  ) {}

  begin(call: { path: RelayPath; model: string; stream: boolean; owner: string | null; surface: string; served?: IncomingMessage }): RelayTrace {
    // A batch's call may start inside the HTTP request that created the batch (it wakes the runner): it is not that request's.
    const record = call.surface === 'batch' ? undefined : recordServing(call.served);
    if (record) {
      record.model = call.model;
      record.stream = call.stream;
    }
    const parent = this.tracing.contextOf(record?.span, record?.traceContext);
    const span = this.tracing.start('upstream relay', parent, { 'switchyard.upstream.path': call.path }, SpanKind.CLIENT);
    const headers = span ? this.tracing.inject(span) : { ...(record?.incomingTrace ?? {}) };
    if (call.stream) this.metrics.openStreams.inc();
    const started = performance.now();
    let done = false;
    return {
      headers,
      end: (outcome) => {
        if (done) return;
        done = true;
        if (call.stream) this.metrics.openStreams.dec();
        const status = upstreamStatusOf(outcome);
        if (record) {
          record.upstreamStatus = status;
          if (outcome.error) record.errorCode = errorCodeOf(outcome.error);
          if (outcome.error) record.errorDetail = errorDetailOf(outcome.error) ?? undefined;
        }
        // What the answer's usage reports counts like a Responses run's tokens: the log line, the span, the counters, the usage store.
        const tokens = tokensOf(outcome.usage);
        if (anyTokens(tokens)) {
          if (record) record.tokens = tokens;
          span?.setAttributes(genAiUsageAttributes(tokens));
        }
        const failed = Boolean(outcome.error);
        countTokens(this.metrics, this.usage, { owner: call.owner, model: call.model, surface: call.surface, tokens, failed, durationMs: performance.now() - started });
        this.metrics.recordUpstreamCall(status, (performance.now() - started) / 1000);
        span?.setAttribute('switchyard.upstream.status', status);
        this.tracing.end(span, outcome.error ? { code: errorCodeOf(outcome.error) } : null);
      },
    };
  }
}
