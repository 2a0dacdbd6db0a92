import { type Observable, type OperatorFunction, connect, filter, from, identity, ignoreElements, map, merge, mergeMap } from 'rxjs';
import { arg } from './lib/flags.js';

/**
 * `npm run build && node dist/bench/round-flatten.bench.js [--rounds=N] [--runs=N]`:
 * what a round pays to flatten its steps into values, measured apart from
 * the rest of the round. One round here is 22 steps shaped like a plain
 * streamed answer (`[[tokens 20]]`): a first step with the run's start and
 * the message's opening events, 20 text deltas of one event each, a last
 * step closing the message. Each step's values pass through the two
 * compositions of standard operators `round.ts` has used:
 *
 * - `mergeMap` every step's array, then split public events from calls
 *   (`connect` / `merge` / `filter`): one inner subscription per step;
 * - a step of one public event passes through `filter` + `map`, only the
 *   others are flattened with `mergeMap` and split (`flattenSteps`).
 *
 * The calls' branch ends in `ignoreElements` here (no call is made), as the
 * scheduler's does for a round without calls. Each figure is the least CPU
 * time of N runs of `--rounds` rounds, the two compositions alternating run
 * by run (other load on the machine only ever adds to a run).
 */

const ROUNDS = Number(arg('rounds') ?? 20_000);
const RUNS = Number(arg('runs') ?? 7);

/** A value the scheduler would take: it has no `type`, as in `isScheduled`. */
interface Call {
  readonly slot: number;
}
interface Event {
  readonly type: string;
  readonly delta?: string;
}
type Values = ReadonlyArray<Event | Call>;

const isCall = (value: Event | Call): value is Call => (value as { type?: unknown }).type === undefined;

function roundSteps(): Values[] {
  const steps: Values[] = [[{ type: 'response.created' }, { type: 'response.in_progress' }, { type: 'response.output_item.added' }, { type: 'response.content_part.added' }]];
  for (let i = 0; i < 20; i++) steps.push([{ type: 'response.output_text.delta', delta: `t${i}` }]);
  steps.push([{ type: 'response.output_text.done' }, { type: 'response.content_part.done' }, { type: 'response.output_item.done' }]);
  return steps;
}

const calls: OperatorFunction<Call, Event> = ignoreElements();

function split(values: Observable<Event | Call>): Observable<Event> {
  return merge(values.pipe(filter((value): value is Event => !isCall(value))), values.pipe(filter(isCall), calls));
}

/** Every step flattened by `mergeMap`, then split. */
const everyStepFlattened: OperatorFunction<Values, Event> = (steps) => steps.pipe(mergeMap(identity), connect(split));

/** A lone public event passed on as it is; the rest flattened, then split. */
const loneEventsPassed: OperatorFunction<Values, Event> = connect((steps: Observable<Values>) =>
  merge(
    steps.pipe(
      filter((values) => values.length === 1 && !isCall(values[0])),
      map((values) => values[0] as Event),
    ),
    steps.pipe(
      filter((values) => values.length > 1 || (values.length === 1 && isCall(values[0]))),
      mergeMap(identity),
      connect(split),
    ),
  ),
);

/** Least CPU time of one run of `ROUNDS` rounds, in µs per round; checks every round gave every event. */
function perRoundUs(chain: OperatorFunction<Values, Event>, steps: Values[], expected: number): number {
  const start = process.cpuUsage();
  let count = 0;
  for (let r = 0; r < ROUNDS; r++)
    from(steps)
      .pipe(chain)
      .subscribe(() => count++);
  const used = process.cpuUsage(start);
  if (count !== expected * ROUNDS) throw new Error(`expected ${expected * ROUNDS} events, got ${count}`);
  return (used.user + used.system) / ROUNDS;
}

function main(): void {
  const steps = roundSteps();
  const expected = steps.reduce((n, values) => n + values.length, 0);
  const chains = { 'mergeMap every step': everyStepFlattened, 'lone events passed (flattenSteps)': loneEventsPassed };
  const best = new Map<string, number>();
  for (let run = 0; run < RUNS; run++) {
    for (const [name, chain] of Object.entries(chains)) best.set(name, Math.min(best.get(name) ?? Infinity, perRoundUs(chain, steps, expected)));
  }
  console.log(`${steps.length} steps, ${expected} events per round; least CPU time of ${RUNS} runs of ${ROUNDS} rounds`);
  console.log('| composition | µs per round |');
  console.log('| --- | --- |');
  for (const [name, us] of best) console.log(`| ${name} | ${us.toFixed(2)} |`);
}

main();
