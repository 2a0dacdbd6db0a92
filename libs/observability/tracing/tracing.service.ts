import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { IncomingHttpHeaders } from 'node:http';
import { OBSERVABILITY_SETTINGS, type ObservabilityConfig } from '../config/observability.config-section.js';
import { extractTraceContext, injectTraceContext } from './w3c-trace-context.js';

/**
 * OpenTelemetry traces, off unless `observability.otlpTracesUrl` is set. The
 * provider is this instance's own, not the global one, so an embedding
 * application's tracing (or a second gateway in one process) is untouched;
 * parents are passed explicitly for the same reason.
 *
 * The SDK and its exporter (and `@opentelemetry/core` under them) are
 * imported only when tracing is on: with it off they would be about 150
 * modules and several MiB of every worker's memory for nothing. Only the
 * API stays (about 0.6 MiB of heap): the client's traceparent is read and
 * passed on with it alone (`w3c-trace-context.ts`). Nest awaits `onModuleInit` before the server listens, so no
 * request meets a tracer still loading.
 */
@Injectable()
export class TracingService implements OnModuleInit, OnApplicationShutdown {
  private provider?: BasicTracerProvider;
  private tracer?: Tracer;

  constructor(@Inject(OBSERVABILITY_SETTINGS) private readonly settings: ObservabilityConfig) {}

  async onModuleInit(): Promise<void> {
    const url = this.settings.otlpTracesUrl;
    if (!url) return;
    const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BasicTracerProvider, BatchSpanProcessor }] = await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-base'),
    ]);
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': this.settings.serviceName }),
      // A short export deadline: an unreachable collector then delays a shutdown by seconds, not the default ten.
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url, timeoutMillis: 3000 }), { scheduledDelayMillis: 1000, exportTimeoutMillis: 3000 })],
    });
    this.tracer = this.provider.getTracer('switchyard');
  }

  get enabled(): boolean {
    return this.tracer !== undefined;
  }

  /** The client's `traceparent` / `tracestate`, as a parent context and as headers to pass on. */
  extract(headers: IncomingHttpHeaders): { context: Context; headers: Record<string, string> } | undefined {
    const traceparent = headers.traceparent;
    if (typeof traceparent !== 'string') return undefined;
    const context = extractTraceContext(headers);
    // A malformed header extracts to nothing: it is neither followed nor passed on.
    if (!context) return undefined;
    const out: Record<string, string> = { traceparent };
    if (typeof headers.tracestate === 'string') out.tracestate = headers.tracestate;
    return { context, headers: out };
  }

  start(name: string, parent: Context | undefined, attributes: Attributes = {}, kind = SpanKind.INTERNAL): Span | undefined {
    return this.tracer?.startSpan(name, { kind, attributes }, parent ?? ROOT_CONTEXT);
  }

  /** The context whose parent is `span`, for its children. */
  contextOf(span: Span | undefined, fallback?: Context): Context | undefined {
    return span ? trace.setSpan(fallback ?? ROOT_CONTEXT, span) : fallback;
  }

  /** W3C headers naming `span` as the parent, for a call leaving the gateway. */
  inject(span: Span): Record<string, string> {
    return injectTraceContext(trace.setSpan(ROOT_CONTEXT, span));
  }

  end(span: Span | undefined, error?: { code?: string | null; message?: string } | null): void {
    if (!span) return;
    if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error.code ?? undefined });
    span.end();
  }

  /** Sends what is buffered (tests, shutdown). */
  async flush(): Promise<void> {
    await this.provider?.forceFlush();
  }

  async onApplicationShutdown(): Promise<void> {
    // A collector that is down must not turn a clean shutdown into a failed one; the spans are lost either way.
    await this.provider?.shutdown().catch(() => undefined);
  }
}
