import { Global, Module } from '@nestjs/common';
import { lastValueFrom, throwError, toArray } from 'rxjs';
import { UpstreamUnavailableError } from '#tool-sdk/errors.js';
import type { JsonObject } from '#tool-sdk/items.js';
import { callEvents, finished, messageEvents, responseRequest } from '../testing/fixtures.js';
import { createLoopHarness, RecordingStateStore, type LoopHarness } from '../testing/loop-harness.js';
import { ProbeExecutor, ProbeToolModule } from '../testing/probe-tool.js';
import { ScriptedUpstreamClient, type ScriptedRound } from '../testing/scripted-upstream.client.js';
import type { ResponseRequest } from './response-request.js';
import { RUN_OBSERVER, type RunObserver } from './run-observer.interface.js';

/** Writes down what the loop reports, in order, as short strings. */
class RecordingObserver implements RunObserver {
  readonly log: string[] = [];
  readonly upstreamHeaders: Array<Record<string, string>> = [];

  begin(request: ResponseRequest) {
    this.log.push(`begin ${request.model}`);
    let firstEvent = true;
    return {
      event: (event: { type: string }) => {
        if (firstEvent) this.log.push(`first event ${event.type}`);
        firstEvent = false;
        if (event.type.startsWith('response.') && ['response.completed', 'response.failed', 'response.incomplete'].includes(event.type)) this.log.push(event.type);
      },
      round: (n: number) => {
        this.log.push(`round ${n}`);
        return {
          upstream: () => {
            const headers = { traceparent: `00-${'a'.repeat(32)}-${String(n).padStart(16, '0')}-01` };
            this.upstreamHeaders.push(headers);
            this.log.push(`upstream ${n}`);
            return { headers, end: (o: { error?: unknown; cancelled?: boolean }) => this.log.push(`upstream ${n} ${o.error ? 'error' : o.cancelled ? 'cancelled' : 'ok'}`) };
          },
          end: () => this.log.push(`round ${n} end`),
        };
      },
      toolCall: (call: { toolName: string }, type: string, round?: unknown) => {
        this.log.push(`tool ${type} ${call.toolName}${round ? '' : ' (no round)'}`);
        return { end: (result: { status: string } | null) => this.log.push(`tool ${call.toolName} ${result ? result.status : 'cancelled'}`) };
      },
      end: (o: { error?: unknown; cancelled?: boolean }) => this.log.push(`end ${o.error ? 'error' : o.cancelled ? 'cancelled' : 'ok'}`),
    };
  }
}

const observer = new RecordingObserver();

@Global()
@Module({ providers: [{ provide: RUN_OBSERVER, useValue: observer }], exports: [RUN_OBSERVER] })
class ObserverModule {}

const probe = (name: string): JsonObject => ({ type: 'probe', name });

describe('the loop reports to a RUN_OBSERVER', () => {
  let harness: LoopHarness | undefined;
  let upstream: ScriptedUpstreamClient;

  async function setUp(rounds: ScriptedRound[]) {
    observer.log.length = 0;
    observer.upstreamHeaders.length = 0;
    upstream = new ScriptedUpstreamClient(rounds);
    harness = await createLoopHarness({ upstream, toolModules: [ProbeToolModule, ObserverModule] });
  }

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  const run = (request: Partial<ResponseRequest> = {}) => lastValueFrom(harness!.loop.run(responseRequest(request), { state: new RecordingStateStore() }).pipe(toArray()));

  it('a run with a gateway call: rounds, the upstream calls, the tool call and its outcome, in order, and one end', async () => {
    await setUp([
      [...callEvents('g', 'call_1', 'lookup', ['{"q":"x"}']), finished],
      [...messageEvents('m', ['done']), finished],
    ]);
    await run({ tools: [probe('lookup')] });
    expect(observer.log).toEqual([
      'begin test-model',
      'round 1',
      'upstream 1',
      'first event response.created',
      'tool probe lookup',
      // The scripted stream ends as soon as it has sent the call; the call finishes after.
      'upstream 1 ok',
      'tool lookup completed',
      'round 1 end',
      'round 2',
      'upstream 2',
      'upstream 2 ok',
      'round 2 end',
      'response.completed',
      'end ok',
    ]);
  });

  it('the headers the observer gives an upstream call go out with it', async () => {
    await setUp([[...messageEvents('m', ['hi']), finished]]);
    await run();
    expect(upstream.options[0]?.context?.headers).toEqual(observer.upstreamHeaders[0]);
  });

  it('forwarded request headers and the trace headers go out together; the trace context wins', async () => {
    await setUp([[...messageEvents('m', ['hi']), finished]]);
    await run({ forwardedHeaders: { 'x-tenant': 't1', traceparent: 'client-supplied' } });
    expect(upstream.options[0]?.context?.headers).toEqual({ 'x-tenant': 't1', ...observer.upstreamHeaders[0] });
  });

  it('an upstream failure ends that upstream call and the run with the error', async () => {
    await setUp([() => throwError(() => new UpstreamUnavailableError('down'))]);
    await expect(run()).rejects.toBeInstanceOf(UpstreamUnavailableError);
    expect(observer.log).toEqual(['begin test-model', 'round 1', 'upstream 1', 'upstream 1 error', 'round 1 end', 'end error']);
  });

  it('a client that leaves mid-call: the tool call and the run end cancelled, once', async () => {
    await setUp([[...callEvents('g', 'call_1', 'lookup', ['{}']), finished]]);
    harness!.moduleRef.get(ProbeExecutor).behaviour = () => new Promise(() => undefined);
    const subscription = harness!.loop.run(responseRequest({ tools: [probe('lookup')] }), { state: new RecordingStateStore() }).subscribe();
    for (let i = 0; i < 50 && !observer.log.includes('tool probe lookup'); i++) await new Promise((r) => setTimeout(r, 10));
    subscription.unsubscribe();
    await new Promise((r) => setTimeout(r, 20));
    expect(observer.log).toContain('tool lookup cancelled');
    expect(observer.log.filter((l) => l.startsWith('end '))).toEqual(['end cancelled']);
  });
});
