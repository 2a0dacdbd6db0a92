import { parseObservabilitySettings } from '../config/observability.config-section.js';
import { TracingService } from './tracing.service.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

describe('TracingService', () => {
  it('is off without an endpoint: no spans, but the client trace context is still read', async () => {
    const tracing = new TracingService(parseObservabilitySettings(undefined));
    await tracing.onModuleInit();
    expect(tracing.enabled).toBe(false);
    expect(tracing.start('x', undefined)).toBeUndefined();
    const extracted = tracing.extract({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: 'vendor=1' });
    expect(extracted?.headers).toEqual({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: 'vendor=1' });
    await tracing.onApplicationShutdown();
  });

  it('ignores a malformed traceparent rather than passing it on', () => {
    const tracing = new TracingService(parseObservabilitySettings(undefined));
    for (const bad of ['garbage', `00-${'0'.repeat(32)}-${SPAN_ID}-01`, `00-${TRACE_ID}-${SPAN_ID}`, ['a', 'b'] as any]) {
      expect(tracing.extract({ traceparent: bad })).toBeUndefined();
    }
    expect(tracing.extract({})).toBeUndefined();
  });

  it('when on, continues the client trace and names its own span in the header it sends on', async () => {
    // Nothing listens here; spans are only created, not flushed.
    const tracing = new TracingService(parseObservabilitySettings({ otlpTracesUrl: 'http://127.0.0.1:9/v1/traces' }));
    // The SDK loads at module init, which Nest awaits before the server listens.
    expect(tracing.enabled).toBe(false);
    await tracing.onModuleInit();
    expect(tracing.enabled).toBe(true);
    const parent = tracing.extract({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-01` })!;
    const span = tracing.start('request', parent.context)!;
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(tracing.inject(span).traceparent).toBe(`00-${TRACE_ID}-${span.spanContext().spanId}-01`);
    span.end();
    // The export fails (connection refused) without throwing: tracing trouble never reaches a request.
    await expect(tracing.onApplicationShutdown()).resolves.toBeUndefined();
  });
});
