import { Injectable, Optional } from '@nestjs/common';
import { SpanKind, type Span } from '@opentelemetry/api';
import { performance } from 'node:perf_hooks';
import { isGatewayError } from '#tool-sdk/errors.js';
import { errorKind } from '#edge/errors/error-kinds.js';
import type { GatewayCall, GatewayCallResult } from '#tool-sdk/contract/index.js';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import { SERVED_REQUEST, type ResponseRequest } from '#core/loop/response-request.js';
import type { RoundTrace, RunObserver, RunTrace, ToolCallTrace, UpstreamTrace } from '#core/loop/run-observer.interface.js';
import { requestOwner } from '#tool-sdk/routes/request-owner.js';
import { RequestRecord, recordServing } from '../context/request-record.js';
import { RequestLog } from '../logging/request-log.service.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.service.js';
import { TracingService } from '../tracing/tracing.service.js';
import type { Usage } from '#tool-sdk/items.js';
import { UsageRecorder } from '../usage/usage-recorder.service.js';
import { errorCodeOf, errorDetailOf, upstreamStatusOf } from './upstream-status.util.js';
import { countTokens } from './token-charge.js';
import { RunTimelineBuilder } from './run-timeline.js';
import { addTokens, anyTokens, emptyTokens, genAiUsageAttributes, surfaceOf, tokensOf, type TokenCounts } from './token-usage.js';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * The loop's observer: fills the request's record (the log line), feeds the
 * metrics and opens the round, upstream and tool-call spans under the
 * request span. Runs outside HTTP (WebSocket mode) get a record of their own.
 */
@Injectable()
export class RunTelemetry implements RunObserver {
  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly tracing: TracingService,
    private readonly log: RequestLog,
    @Optional() private readonly usage?: UsageRecorder,
  ) {}

  begin(request: ResponseRequest, responseId?: string): RunTrace {
    const current = recordServing(request[SERVED_REQUEST]);
    // A background run outlives the request that queued it, and a WebSocket run has none: each
    // writes a record of its own when it ends (a background run's span joins the queuing request's trace).
    const background = Boolean((request as { background?: boolean }).background);
    // A batch's request may start inside the HTTP request that created the batch (it wakes the runner): it is not that request's.
    const batch = request.edge?.method === 'BATCH';
    const attached = current && !current.finished && !background && !batch ? current : undefined;
    const record = attached ?? new RequestRecord(request.edge?.method ?? (background ? 'BACKGROUND' : 'WS'), request.edge?.path ?? '/v1/responses');
    // A broker request's record, entered around its run while tracing (`RpcRunTelemetry`): the run ends it.
    if (attached?.detached && !attached.adopted) {
      attached.adopted = true;
      attached.owner = request.owner;
    }
    if (!attached) {
      const parent = background ? this.tracing.contextOf(current?.span, current?.traceContext) : undefined;
      record.span = this.tracing.start(`${record.method} /v1/responses`, parent, { 'switchyard.surface': background ? 'background' : 'websocket' }, SpanKind.SERVER);
      if (request.edge) record.owner = request.owner;
      if (background) record.owner = current?.req ? requestOwner(current.req) : current?.owner;
      // The queuing request's own line names the response it queued.
      if (background && current && !current.finished && typeof request.responseId === 'string') {
        current.responseId = request.responseId;
        current.responseStatus = 'queued';
        current.model = request.model ?? undefined;
      }
    }
    record.model = request.model ?? undefined;
    record.stream = request.stream;
    // Known before the first event, so a run cancelled before it (a broker caller that left) is named too.
    const id = request.responseId ?? responseId;
    if (typeof id === 'string') record.responseId ??= id;
    return new RunTraceImpl(record, this.metrics, this.tracing, this.log, { owner: request.owner, usage: this.usage });
  }
}

class RunTraceImpl implements RunTrace {
  private ended = false;
  private firstEventSeen = false;
  /** Rounds' usage as they end; the terminal response's usage replaces it when there is one (they agree). */
  readonly roundTokens = emptyTokens();
  private terminalTokens?: TokenCounts;
  private readonly startedAt = performance.now();
  /** Only when something reads timelines (the console is on). */
  private readonly timeline?: RunTimelineBuilder;

  constructor(
    private readonly record: RequestRecord,
    private readonly metrics: GatewayMetrics,
    private readonly tracing: TracingService,
    private readonly log: RequestLog,
    private readonly run: { owner: string | null; usage?: UsageRecorder },
  ) {
    if (record.stream) metrics.openStreams.inc();
    if (run.usage?.keepsTimelines) this.timeline = new RunTimelineBuilder();
  }

  private get parent() {
    return this.tracing.contextOf(this.record.span, this.record.traceContext);
  }

  event(event: ResponseStreamEvent): void {
    if (!this.firstEventSeen) {
      this.firstEventSeen = true;
      this.record.firstEventMs = this.record.elapsedMs();
      this.metrics.recordFirstEvent(Boolean(this.record.stream), this.record.firstEventMs / 1000);
    }
    if (!this.record.responseId) {
      const id = (event as { response?: { id?: unknown } }).response?.id;
      if (typeof id === 'string') this.record.responseId = id;
    }
    if (TERMINAL.has(event.type)) {
      const response = (event as { response?: { id?: unknown; status?: unknown } }).response;
      if (typeof response?.id === 'string') this.record.responseId = response.id;
      if (typeof response?.status === 'string') this.record.responseStatus = response.status;
      const usage = (response as { usage?: Usage | null } | undefined)?.usage;
      if (usage) this.terminalTokens = tokensOf(usage);
    }
  }

  round(round: number): RoundTrace {
    this.record.rounds = round;
    const span = this.tracing.start('inference round', this.parent, { 'switchyard.round': round });
    return new RoundTraceImpl(span, this.record, this.metrics, this.tracing, this.roundTokens, round, this.timeline?.round(round));
  }

  toolCall(call: GatewayCall, toolType: string, round?: RoundTrace): ToolCallTrace {
    const parent = round instanceof RoundTraceImpl ? this.tracing.contextOf(round.span, this.parent) : this.parent;
    const attributes: Record<string, string> = { 'switchyard.tool.type': toolType, 'switchyard.tool.name': call.toolName };
    if (call.scope) attributes['switchyard.tool.server_label'] = call.scope;
    const span = this.tracing.start(`tool ${toolType}`, parent, attributes);
    const started = performance.now();
    const roundNumber = round instanceof RoundTraceImpl ? round.number : undefined;
    const onTimeline = this.timeline?.tool({
      kind: 'call',
      toolType,
      name: call.toolName,
      ...(call.scope ? { serverLabel: call.scope } : {}),
      ...(roundNumber === undefined ? {} : { round: roundNumber }),
    });
    let done = false;
    return {
      end: (result: GatewayCallResult | null) => {
        if (done) return;
        done = true;
        const outcome = result ? result.status : 'cancelled';
        onTimeline?.(outcome, result?.error?.code);
        this.record.countToolCall(toolType, outcome);
        this.metrics.recordToolCall(toolType, outcome, (performance.now() - started) / 1000);
        span?.setAttribute('switchyard.tool.outcome', outcome);
        this.tracing.end(span, outcome === 'completed' ? null : { code: result?.error?.code ?? outcome });
      },
    };
  }

  discovery(toolType: string, declaration: string): { end(outcome: { error?: unknown }): void } {
    const attributes: Record<string, string> = { 'switchyard.tool.type': toolType, 'switchyard.tool.declaration': declaration };
    const span = this.tracing.start(`discover ${toolType}`, this.parent, attributes);
    const onTimeline = this.timeline?.tool({ kind: 'discovery', toolType, name: declaration });
    let done = false;
    return {
      end: ({ error }) => {
        if (done) return;
        done = true;
        onTimeline?.(error ? 'failed' : 'completed', error ? errorCodeOf(error) : undefined);
        span?.setAttribute('switchyard.tool.outcome', error ? 'failed' : 'completed');
        this.tracing.end(span, error ? { code: errorCodeOf(error) } : null);
      },
    };
  }

  end(outcome: { error?: unknown; cancelled?: boolean }): void {
    if (this.ended) return;
    this.ended = true;
    if (this.record.stream) this.metrics.openStreams.dec();
    if (this.record.rounds > 0) this.metrics.recordRounds(this.record.rounds);
    if (outcome.error) this.record.errorCode = errorCodeOf(outcome.error);
    if (outcome.error) this.record.errorDetail = errorDetailOf(outcome.error) ?? undefined;
    if (outcome.cancelled && !this.record.responseStatus) this.record.responseStatus = 'cancelled';
    this.countTokens(outcome);
    this.keepTimeline(outcome);
    if (this.record.detached) {
      // No HTTP status of its own: the socket's (101), or the one the error frame carries.
      const ok = this.record.method === 'WS' ? 101 : 200;
      this.record.status = outcome.error ? (isGatewayError(outcome.error) ? errorKind(outcome.error).status : 500) : ok;
      // Broker requests (method RPC, path the pattern) are counted here: they have no HTTP exchange.
      if (this.record.method === 'RPC') this.metrics.recordBrokerRequest(this.record.path, this.record.status);
      this.log.finish(this.record, this.record.owner);
    }
  }

  /**
   * The run's tokens, once: into the record (log line, request span), the
   * token metrics and the usage store. A cancelled run has no terminal
   * response; the rounds it finished still count.
   */
  private countTokens(outcome: { error?: unknown }): void {
    const tokens = this.terminalTokens ?? this.roundTokens;
    if (anyTokens(tokens)) this.record.tokens = tokens;
    countTokens(this.metrics, this.run.usage, {
      owner: this.run.owner,
      model: this.record.model ?? '',
      surface: surfaceOf(this.record.method, this.record.path),
      tokens,
      failed: this.failed(outcome),
      durationMs: performance.now() - this.startedAt,
    });
  }

  private failed(outcome: { error?: unknown }): boolean {
    return Boolean(outcome.error) || this.record.responseStatus === 'failed';
  }

  private keepTimeline(outcome: { error?: unknown }): void {
    const responseId = this.record.responseId;
    if (!this.timeline || !responseId) return;
    this.run.usage?.recordTimeline(
      this.timeline.build({
        responseId,
        owner: this.run.owner,
        model: this.record.model ?? '',
        surface: surfaceOf(this.record.method, this.record.path),
        status: this.record.responseStatus ?? (this.failed(outcome) ? 'failed' : 'completed'),
        ...(this.record.errorCode ? { error: this.record.errorCode } : {}),
      }),
    );
  }
}

class RoundTraceImpl implements RoundTrace {
  constructor(
    readonly span: Span | undefined,
    private readonly record: RequestRecord,
    private readonly metrics: GatewayMetrics,
    private readonly tracing: TracingService,
    private readonly runTokens: TokenCounts,
    readonly number: number,
    private readonly timeline?: ReturnType<RunTimelineBuilder['round']>,
  ) {}

  usage(usage: Usage | null): void {
    const tokens = tokensOf(usage);
    addTokens(this.runTokens, tokens);
    this.span?.setAttributes(genAiUsageAttributes(tokens));
  }

  upstream(): UpstreamTrace {
    const span = this.tracing.start('upstream inference', this.tracing.contextOf(this.span, this.record.traceContext), {}, SpanKind.CLIENT);
    // Traced: the upstream's work hangs under this call. Not traced: the
    // client's own trace context goes on unchanged, so its trace still connects.
    const headers = span ? this.tracing.inject(span) : { ...this.record.incomingTrace };
    const started = performance.now();
    const onTimeline = this.timeline?.upstream();
    let done = false;
    return {
      headers,
      end: (outcome) => {
        if (done) return;
        done = true;
        onTimeline?.(outcome.error ? errorCodeOf(outcome.error) : outcome.cancelled ? 'cancelled' : undefined);
        const status = upstreamStatusOf(outcome);
        this.record.upstreamStatus = status;
        // A failure the response reports (response.failed) tells the caller only what it may know: the where is logged here.
        const detail = outcome.error ? errorDetailOf(outcome.error) : null;
        if (detail) this.record.errorDetail = detail;
        this.metrics.recordUpstreamCall(status, (performance.now() - started) / 1000);
        span?.setAttribute('switchyard.upstream.status', status);
        this.tracing.end(span, outcome.error ? { code: errorCodeOf(outcome.error) } : null);
      },
    };
  }

  end(): void {
    this.timeline?.end();
    this.tracing.end(this.span);
  }
}
