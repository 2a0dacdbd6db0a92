import { ROOT_CONTEXT, createTraceState, isSpanContextValid, trace, type Context, type SpanContext } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';

/*
 * W3C Trace Context (`traceparent` / `tracestate`), read and written with
 * `@opentelemetry/api` alone. The same rules as `@opentelemetry/core`'s
 * `W3CTraceContextPropagator`, kept here because importing that package
 * loads all of `@opentelemetry/core` (dozens of modules) into every process,
 * while a traceparent is passed on even with tracing off.
 */

// A version other than ff; a trace id and a parent id that are not all zeros.
const TRACE_PARENT = /^\s?((?!ff)[\da-f]{2})-((?![0]{32})[\da-f]{32})-((?![0]{16})[\da-f]{16})-([\da-f]{2})(-.*)?\s?$/;

/** The span context a `traceparent` names, or undefined when it is malformed. */
export function parseTraceParent(value: string): SpanContext | undefined {
  const match = TRACE_PARENT.exec(value);
  // Later versions may add fields after the flags; version 00 may not.
  if (!match || (match[1] === '00' && match[5])) return undefined;
  return { traceId: match[2], spanId: match[3], traceFlags: parseInt(match[4], 16), isRemote: true };
}

/** The remote parent the client's headers name, as a context; undefined when there is none or it is malformed. */
export function extractTraceContext(headers: IncomingHttpHeaders): Context | undefined {
  const raw = headers.traceparent;
  const traceparent = Array.isArray(raw) ? raw[0] : raw;
  if (typeof traceparent !== 'string') return undefined;
  const parent = parseTraceParent(traceparent);
  if (!parent) return undefined;
  const state = headers.tracestate;
  // Several `tracestate` headers are one list (W3C), joined in order.
  const joined = Array.isArray(state) ? state.join(',') : state;
  if (joined) parent.traceState = createTraceState(joined);
  return trace.setSpanContext(ROOT_CONTEXT, parent);
}

/** `traceparent` (and `tracestate`) naming the span in `context` as the parent. */
export function injectTraceContext(context: Context): Record<string, string> {
  const span = trace.getSpanContext(context);
  if (!span || !isSpanContextValid(span)) return {};
  const carrier: Record<string, string> = { traceparent: `00-${span.traceId}-${span.spanId}-0${Number(span.traceFlags || 0).toString(16)}` };
  if (span.traceState) carrier.tracestate = span.traceState.serialize();
  return carrier;
}
