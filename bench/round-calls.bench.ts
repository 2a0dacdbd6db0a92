import { Observable, type OperatorFunction, Subscriber, connect, filter, from, map, merge, mergeMap, of } from 'rxjs';
import type { GatewayCall, GatewayExecutor, ToolOutput } from '#tool-sdk/contract/index.js';
import type { ToolEntry } from '#core/registry/tool-registry.js';
import { isScheduled, scheduleCalls, type ScheduledCall, type ScheduledResult } from '#core/loop/gateway-scheduler.service.js';
import { arg } from './lib/flags.js';

/**
 * `npm run build && node dist/bench/round-calls.bench.js [--deltas=N] [--rounds=N]`:
 * what a round that runs one gateway call pays in RxJS subscriptions and
 * hops (values handed from one subscriber to the next) to flatten its steps
 * and run the call, measured apart from the rest of the round. Counted, not
 * timed, so a busy host does not change the figures. One round here is a
 * first step with the run's start and a message's opening events, `--deltas`
 * text deltas of one event each, a step closing the message and starting
 * the call (its public start, then the call), and the call's finish. Both
 * compositions flatten the steps as `flattenSteps` in `round.ts` does and
 * run the call through the real scheduler with a synchronous executor; they
 * differ in how public events and the call share one stream:
 *
 * - split, then joined: `connect` + `merge` of `filter(isEvent)` and
 *   `filter(isScheduled)` + the scheduler + `mergeMap` over the finish
 *   events each result makes (the batch's `execute()` before);
 * - `scheduleAmong`: the scheduler passes the events through itself and
 *   hands on each result's finish events as it gets them.
 */

const DELTAS = Number(arg('deltas') ?? 20);
const ROUNDS = Number(arg('rounds') ?? 1_000);

interface Event {
  readonly type: string;
}
type Values = ReadonlyArray<Event | ScheduledCall>;

const executor = {
  type: 'bench',
  execute: (): Observable<ToolOutput> => of({ text: 'done' }),
  planEvents: () => ({ startedItem: { type: 'bench_call' }, beforeExecute: [], afterExecute: () => [] }),
  publicOutput: () => ({ type: 'bench_call' }),
} satisfies GatewayExecutor<Record<string, never>>;

const entry: ToolEntry = {
  modelName: 'lookup',
  toolType: 'bench',
  toolName: 'lookup',
  ownership: { kind: 'gateway', binding: { executor, params: {}, parallelSafe: true, timeoutMs: 5_000 } },
  handler: { type: 'bench', gatewayOwned: true, validate: () => ({}), normalize: () => [] },
  declarationIndex: 0,
  offered: true,
};

const call: GatewayCall = { callId: 'call_1', itemId: 'bench_1', modelName: 'lookup', toolName: 'lookup', arguments: '{}' };

function roundSteps(): Values[] {
  const steps: Values[] = [[{ type: 'response.created' }, { type: 'response.in_progress' }, { type: 'response.output_item.added' }, { type: 'response.content_part.added' }]];
  for (let i = 0; i < DELTAS; i++) steps.push([{ type: 'response.output_text.delta' }]);
  steps.push([
    { type: 'response.output_text.done' },
    { type: 'response.content_part.done' },
    { type: 'response.output_item.done' },
    { type: 'response.output_item.added' },
    { type: 'response.bench_call.in_progress' },
    { slot: 0, call, entry },
  ]);
  return steps;
}

const options = { requestId: 'resp_bench', include: [], window: 10 };
const finishEvents = (result: ScheduledResult): Event[] => [{ type: `response.output_item.done:${result.slot}` }];

/** The batch's `execute()` before: the scheduler's results mapped to finish events by `mergeMap`, after a split of the stream. */
const splitThenJoined: OperatorFunction<Event | ScheduledCall, Event> = connect((values) =>
  merge(
    values.pipe(filter((value): value is Event => !isScheduled(value))),
    values.pipe(
      filter(isScheduled),
      scheduleCalls<never, ScheduledResult>(options, (result) => [result]),
      mergeMap(finishEvents),
    ),
  ),
);

/** The batch's `execute()` now: one operator for the events and the call. */
const among: OperatorFunction<Event | ScheduledCall, Event> = scheduleCalls<Event, Event>(options, finishEvents);

/** `flattenSteps` of `round.ts`, over arrays of values. */
function flattenSteps(calls: OperatorFunction<Event | ScheduledCall, Event>): OperatorFunction<Values, Event> {
  return connect((steps: Observable<Values>) =>
    merge(
      steps.pipe(
        filter((values, index) => index > 0 && values.length === 1),
        map((values) => values[0] as Event),
      ),
      steps.pipe(
        filter((values, index) => index === 0 || values.length > 1),
        mergeMap((values) => values),
        calls,
      ),
    ),
  );
}

/** Subscriptions and hops per round, counted by wrapping the two prototype methods every operator goes through. */
function counted(chain: OperatorFunction<Values, Event>, steps: Values[]): { subscriptions: number; hops: number; events: string[] } {
  const { subscribe } = Observable.prototype;
  const { next } = Subscriber.prototype;
  let subscriptions = 0;
  let hops = 0;
  Observable.prototype.subscribe = function (this: Observable<unknown>, ...args: unknown[]) {
    subscriptions++;
    return (subscribe as (...args: unknown[]) => ReturnType<typeof subscribe>).apply(this, args);
  } as typeof subscribe;
  Subscriber.prototype.next = function (this: Subscriber<unknown>, value: unknown) {
    hops++;
    return next.call(this, value);
  };
  const events: string[] = [];
  try {
    for (let r = 0; r < ROUNDS; r++)
      from(steps)
        .pipe(chain)
        .subscribe((event) => r === 0 && events.push(event.type));
  } finally {
    Observable.prototype.subscribe = subscribe;
    Subscriber.prototype.next = next;
  }
  return { subscriptions: subscriptions / ROUNDS, hops: hops / ROUNDS, events };
}

function main(): void {
  const steps = roundSteps();
  const chains = { 'split, then joined (before)': flattenSteps(splitThenJoined), scheduleAmong: flattenSteps(among) };
  const results = Object.entries(chains).map(([name, chain]) => ({ name, ...counted(chain, steps) }));
  // Both must give the same events in the same order, or the counts compare nothing.
  const [first, ...rest] = results;
  for (const other of rest) {
    if (other.events.join() !== first.events.join()) throw new Error(`${other.name} emits ${other.events.join()} where ${first.name} emits ${first.events.join()}`);
  }
  console.log(`${steps.length} steps, ${first.events.length} events and one synchronous call per round; counts per round over ${ROUNDS} rounds`);
  console.log('| composition | subscriptions | hops |');
  console.log('| --- | --- | --- |');
  for (const { name, subscriptions, hops } of results) console.log(`| ${name} | ${subscriptions} | ${hops} |`);
}

main();
