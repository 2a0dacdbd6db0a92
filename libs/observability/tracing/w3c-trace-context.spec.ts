import { ROOT_CONTEXT, defaultTextMapGetter, defaultTextMapSetter, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { IncomingHttpHeaders } from 'node:http';
import { extractTraceContext, injectTraceContext } from './w3c-trace-context.js';

// @opentelemetry/core's propagator is the reference: the gateway's own copy must read and write what it does.
const reference = new W3CTraceContextPropagator();
const ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';

const CASES: Array<[string, IncomingHttpHeaders]> = [
  ['sampled', { traceparent: `00-${ID}-${PARENT}-01` }],
  ['not sampled, with a tracestate', { traceparent: `00-${ID}-${PARENT}-00`, tracestate: 'vendor=a,other=b' }],
  ['two tracestate headers', { traceparent: `00-${ID}-${PARENT}-01`, tracestate: ['a=1', 'b=2'] as unknown as string }],
  ['a later version with an extra field', { traceparent: `01-${ID}-${PARENT}-01-extra` }],
  ['version 00 with an extra field', { traceparent: `00-${ID}-${PARENT}-01-extra` }],
  ['version ff', { traceparent: `ff-${ID}-${PARENT}-01` }],
  ['an all-zero trace id', { traceparent: `00-${'0'.repeat(32)}-${PARENT}-01` }],
  ['an all-zero parent id', { traceparent: `00-${ID}-${'0'.repeat(16)}-01` }],
  ['upper-case hex', { traceparent: `00-${ID.toUpperCase()}-${PARENT}-01` }],
  ['a short trace id', { traceparent: `00-${ID.slice(1)}-${PARENT}-01` }],
  ['garbage', { traceparent: 'not a traceparent' }],
  ['no header', {}],
];

describe('W3C trace context without @opentelemetry/core', () => {
  it.each(CASES)('reads %s as the reference propagator does', (_name, headers) => {
    const expected = trace.getSpanContext(reference.extract(ROOT_CONTEXT, headers, defaultTextMapGetter));
    const actual = extractTraceContext(headers);
    if (!expected) return expect(actual).toBeUndefined();
    const got = trace.getSpanContext(actual!);
    expect({ ...got, traceState: got?.traceState?.serialize() }).toEqual({ ...expected, traceState: expected.traceState?.serialize() });
  });

  it('writes the headers the reference propagator writes, tracestate included', () => {
    for (const [, headers] of CASES) {
      const context = reference.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const expected: Record<string, string> = {};
      reference.inject(context, expected, defaultTextMapSetter);
      expect(injectTraceContext(context)).toEqual(expected);
    }
    // The cases above must have produced headers at all, or the comparison proves nothing.
    expect(injectTraceContext(extractTraceContext(CASES[1][1])!)).toEqual({ traceparent: `00-${ID}-${PARENT}-00`, tracestate: 'vendor=a,other=b' });
  });
});
