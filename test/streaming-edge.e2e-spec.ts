import { Injectable, Module, type CallHandler, type ExecutionContext, type LoggerService, type NestInterceptor } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import type { Request, Response } from 'express';
import { type Observable, take, tap } from 'rxjs';
import type { EdgeOutcome } from '#edge/responder/edge-responder.js';
import { parseSse, startStack, type GatewayStack } from './support/gateway-harness.js';
import { SocketClient } from './support/socket-client.js';

/** What the interceptor saw of one exchange, recorded when the handler's Observable completed. */
interface Exchange {
  path: string;
  outcome: EdgeOutcome | undefined;
  /** Whether the response had been ended when the handler's Observable completed. */
  endedAtCompletion: boolean;
  /** Milliseconds from the handler's call to the completion of what it returned. */
  elapsedMs: number;
}

@Injectable()
class ExchangeRecorder {
  readonly exchanges: Exchange[] = [];
}

/** A host's own timing interceptor, as an application embedding the gateway would register it. */
@Injectable()
class ExchangeTimer implements NestInterceptor {
  constructor(private readonly recorder: ExchangeRecorder) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    const started = performance.now();
    let outcome: EdgeOutcome | undefined;
    return next.handle().pipe(
      tap({
        next: (value) => (outcome = value as EdgeOutcome),
        complete: () => this.recorder.exchanges.push({ path: req.path, outcome, endedAtCompletion: res.writableEnded, elapsedMs: performance.now() - started }),
      }),
    );
  }
}

@Module({ providers: [ExchangeRecorder, { provide: APP_INTERCEPTOR, useClass: ExchangeTimer }], exports: [ExchangeRecorder] })
class ExchangeTimingModule {}

/** Keeps what the gateway logs, by level. */
function captureLogs(stack: GatewayStack): { warn: string[]; error: string[] } {
  const seen = { warn: [] as string[], error: [] as string[] };
  const logger: LoggerService = {
    log: () => undefined,
    warn: (message: unknown) => void seen.warn.push(String(message)),
    error: (message: unknown) => void seen.error.push(String(message)),
  };
  stack.app.useLogger(logger);
  return seen;
}

async function post(stack: GatewayStack, path: string, body: unknown) {
  const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: bytes.toString('utf8') };
}

describe('one streaming edge: what a Nest interceptor sees', () => {
  let stack: GatewayStack;
  let recorder: ExchangeRecorder;
  beforeAll(async () => {
    stack = await startStack({ imports: [ExchangeTimingModule] });
    recorder = stack.app.get(ExchangeRecorder);
  });
  afterAll(() => stack.close());
  beforeEach(() => void recorder.exchanges.splice(0));

  it('times a streaming response to its end and counts the bytes the client received', async () => {
    const r = await post(stack, '/responses', { model: 'm', input: 'hello there', stream: true });
    expect(r.status).toBe(200);
    const events = parseSse(r.text);
    expect(events.at(-1)?.event).toBe('response.completed');
    expect(recorder.exchanges).toHaveLength(1);
    const [exchange] = recorder.exchanges;
    expect(exchange.path).toBe('/v1/responses');
    // Completion came once the stream was written to its end, not when the handler returned.
    expect(exchange.endedAtCompletion).toBe(true);
    expect(exchange.outcome).toEqual({ status: 200, bytes: r.bytes.length, failed: false, clientGone: false });
    expect(exchange.elapsedMs).toBeGreaterThan(0);
  });

  it('times a blocking response and counts its body', async () => {
    const r = await post(stack, '/responses', { model: 'm', input: 'hello there' });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).status).toBe('completed');
    expect(recorder.exchanges).toHaveLength(1);
    expect(recorder.exchanges[0].endedAtCompletion).toBe(true);
    expect(recorder.exchanges[0].outcome).toEqual({ status: 200, bytes: r.bytes.length, failed: false, clientGone: false });
  });

  it('sees the Messages surface the same way, streaming and blocking', async () => {
    const body = { model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'hello there' }] };
    const streamed = await post(stack, '/messages', { ...body, stream: true });
    const blocking = await post(stack, '/messages', body);
    expect(parseSse(streamed.text).at(-1)?.event).toBe('message_stop');
    expect(JSON.parse(blocking.text).type).toBe('message');
    expect(recorder.exchanges.map((e) => [e.path, e.endedAtCompletion, e.outcome?.bytes])).toEqual([
      ['/v1/messages', true, streamed.bytes.length],
      ['/v1/messages', true, blocking.bytes.length],
    ]);
  });

  it('sees a failed run as a failed outcome with the status sent', async () => {
    const r = await post(stack, '/responses', { model: 'm', input: '[[fault status=429 retry_after=2]]' });
    expect(r.status).toBe(429);
    expect(recorder.exchanges[0].outcome).toEqual({ status: 429, bytes: r.bytes.length, failed: true, clientGone: false });
  });

  // Nest tears down the Observable a handler returns when the client leaves;
  // the edge's own watch on the response cancels the run and settles the
  // exchange too, whichever sees the socket close first.
  it.each(['/responses', '/messages'])('%s: a client that leaves mid-stream cancels the upstream call, and the interceptor sees it gone', async (path) => {
    const aborted = stack.simulator.stats.aborted;
    const slow = '[[delay token=50]] [[tokens 400]]';
    const body = path === '/responses' ? { model: 'm', input: slow, stream: true } : { model: 'm', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: slow }] };
    const controller = new AbortController();
    const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: controller.signal });
    await res.body!.getReader().read();
    controller.abort();
    const deadline = Date.now() + 10_000;
    while ((recorder.exchanges.length === 0 || stack.simulator.stats.aborted === aborted) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(stack.simulator.stats.aborted).toBe(aborted + 1);
    expect(recorder.exchanges).toHaveLength(1);
    expect(recorder.exchanges[0]).toMatchObject({ path: `/v1${path}`, outcome: { status: 200, failed: false, clientGone: true } });
    expect(recorder.exchanges[0].outcome!.bytes).toBeGreaterThan(0);
  });
});

/** A host interceptor that lets go of the exchange after its first three values, as `take(3)` does. */
@Injectable()
class FirstThree implements NestInterceptor {
  readonly seen: string[] = [];

  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      take(3),
      tap((value) => this.seen.push((value as { type?: string }).type ?? 'outcome')),
    );
  }
}

@Module({ providers: [FirstThree, { provide: APP_INTERCEPTOR, useExisting: FirstThree }], exports: [FirstThree] })
class FirstThreeModule {}

describe('one streaming edge: a host interceptor holds the run', () => {
  let stack: GatewayStack;
  let interceptor: FirstThree;
  beforeAll(async () => {
    stack = await startStack({ imports: [FirstThreeModule] });
    interceptor = stack.app.get(FirstThree);
  });
  afterAll(() => stack.close());
  beforeEach(() => void interceptor.seen.splice(0));

  /** Waits (bounded) until the simulated upstream has seen one more request aborted. */
  async function upstreamAborted(before: number): Promise<number> {
    const deadline = Date.now() + 10_000;
    while (stack.simulator.stats.aborted === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    return stack.simulator.stats.aborted;
  }

  it('take(3) on a stream cancels the upstream request, and the stream ends with the stopped error', async () => {
    const aborted = stack.simulator.stats.aborted;
    const r = await post(stack, '/responses', { model: 'm', input: '[[delay token=50]] [[tokens 400]]', stream: true });
    expect(await upstreamAborted(aborted)).toBe(aborted + 1);
    expect(interceptor.seen).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    const events = parseSse(r.text);
    expect(events.map((e) => e.event)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'error']);
    expect(events[3].data.error.code).toBe('request_stopped');
  });

  // A blocking run's upstream answers whole before the run has three events; what is left to stop is the answer.
  it('take(3) on a blocking request: the client gets 503 request_stopped, not a hang', async () => {
    const r = await post(stack, '/responses', { model: 'm', input: 'hello there' });
    expect(r.status).toBe(503);
    expect(JSON.parse(r.text).error.code).toBe('request_stopped');
    expect(interceptor.seen).toHaveLength(3);
  });
});

describe('one streaming edge: errors after the handler returned', () => {
  let stack: GatewayStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it.each([false, true])('Messages keeps Retry-After on an upstream 429 (stream=%s)', async (stream) => {
    const r = await post(stack, '/messages', { model: 'm', max_tokens: 64, stream, messages: [{ role: 'user', content: '[[fault status=429 retry_after=7]]' }] });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    expect(JSON.parse(r.text)).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });

  it('Messages keeps Retry-After on an upstream 503 (answered as 502, as on /v1/responses)', async () => {
    const messages = await post(stack, '/messages', { model: 'm', max_tokens: 64, messages: [{ role: 'user', content: '[[fault status=503 retry_after=9]]' }] });
    const responses = await post(stack, '/responses', { model: 'm', input: '[[fault status=503 retry_after=9]]' });
    expect([messages.status, messages.headers.get('retry-after')]).toEqual([responses.status, responses.headers.get('retry-after')]);
    expect(messages.headers.get('retry-after')).toBe('9');
    expect(JSON.parse(messages.text)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });

  it('logs a run that fails after the handler returned, on every surface', async () => {
    const logs = captureLogs(stack);
    await post(stack, '/responses', { model: 'm', input: '[[fault status=500 message="engine exploded"]]', stream: true });
    await post(stack, '/messages', { model: 'm', max_tokens: 64, messages: [{ role: 'user', content: '[[fault status=500 message="engine exploded"]]' }] });
    const socket = await SocketClient.open(stack);
    try {
      socket.create({ model: 'm', input: '[[fault status=500 message="engine exploded"]]', store: false });
      expect((await socket.untilDone()).at(-1)).toMatchObject({ type: 'error', status: 502 });
    } finally {
      await socket.close();
    }
    expect(logs.warn).toEqual([
      expect.stringMatching(/^Responses: .*502 upstream_error/),
      expect.stringMatching(/^Messages: .*502 upstream_error/),
      expect.stringMatching(/^Responses WebSocket: .*502 upstream_error/),
    ]);
    // The upstream's own words stay out of the log: they may quote the request.
    expect(logs.warn.join('\n')).not.toContain('engine exploded');
  });
});
