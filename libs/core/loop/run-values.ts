import type { JsonObject, Usage } from '#tool-sdk/items.js';
import type { EventInit } from './response-events.js';
import type { ResponseRequest } from './response-request.js';
import type { CompletedRun } from './response-state.interface.js';

/**
 * What a run emits, in order: its public events (`response.*`, not numbered
 * yet) and a few notes only the edge reads (`run.*`). Every step of a run is
 * an Observable of these; the edge (`response-output.ts`) turns them into the
 * numbered events a client sees and the response object they describe.
 */
export type RunValue = EventInit | RunNote;

export type RunNote = RunDescribed | RunUsage | RunCutShort | RunFinished;

/** What the response objects describe: the effective request once known, then the prepared tools. */
export interface RunDescribed {
  readonly type: 'run.described';
  readonly request: ResponseRequest;
  readonly tools?: readonly JsonObject[];
}

/** The tokens the run used so far: what a `response.failed` reports and a limiter charges. */
export interface RunUsage {
  readonly type: 'run.usage';
  readonly usage: Usage;
}

/** The upstream stopped short: the last message in the output ends `incomplete`. */
export interface RunCutShort {
  readonly type: 'run.cut_short';
}

/** The turn is over: the edge saves it with its output, then announces it. */
export interface RunFinished {
  readonly type: 'run.finished';
  readonly status: 'completed' | 'incomplete';
  readonly incompleteReason: string | null;
  readonly usage: Usage;
  readonly record: Omit<CompletedRun, 'request' | 'response'>;
}

/**
 * The run has started: `response.created` then `response.in_progress`. Any
 * step may say so (the first model event, a discovery listing, the keep-alive
 * timer); the edge fills in the response and sends the pair once.
 */
export function startEvents(): EventInit[] {
  return [{ type: 'response.created' }, { type: 'response.in_progress' }];
}
