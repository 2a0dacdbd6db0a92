import { Observable, from } from 'rxjs';
import type { ModelEvent, ModelRequest } from '../protocol/model-events.js';
import type { InferOptions, ModelInfo, UpstreamClient } from '#upstream/upstream-client.interface.js';

/** One upstream round: fixed events, or a source built from the request (errors, never-ending streams). */
export type ScriptedRound = ModelEvent[] | ((request: ModelRequest) => Observable<ModelEvent>);

/**
 * An `UpstreamClient` answering each `infer` with the next scripted round.
 * Requests are copied when the call is subscribed, since the loop keeps
 * appending to the transcript it passed.
 */
export class ScriptedUpstreamClient implements UpstreamClient {
  readonly dialect = 'responses' as const;
  readonly requests: ModelRequest[] = [];
  /** The options each call was made with (flow gate, extra headers), in call order. */
  readonly options: InferOptions[] = [];
  /** Subscriptions torn down before their round finished (the request was aborted). */
  abandoned = 0;
  private readonly script: (round: number, request: ModelRequest) => ScriptedRound | undefined;

  /** Either a list of rounds in order, or a function choosing the round (1-based) from the request. */
  constructor(rounds: ScriptedRound[] | ((round: number, request: ModelRequest) => ScriptedRound)) {
    this.script = Array.isArray(rounds) ? (round) => rounds[round - 1] : rounds;
  }

  infer(request: ModelRequest, options: InferOptions = {}): Observable<ModelEvent> {
    return new Observable<ModelEvent>((subscriber) => {
      const copy = structuredClone(request);
      this.requests.push(copy);
      this.options.push(options);
      const round = this.requests.length;
      const script = this.script(round, copy);
      if (!script) {
        subscriber.error(new Error(`no upstream round ${round} was scripted`));
        return;
      }
      let ended = false;
      const inner = (Array.isArray(script) ? from(script) : script(copy)).subscribe({
        next: (event) => subscriber.next(event),
        error: (err: unknown) => {
          ended = true;
          subscriber.error(err);
        },
        complete: () => {
          ended = true;
          subscriber.complete();
        },
      });
      return () => {
        if (!ended) this.abandoned++;
        inner.unsubscribe();
      };
    });
  }

  async listModels(): Promise<ModelInfo[]> {
    return [{ id: 'test-model', object: 'model', created: 0, owned_by: 'test' }];
  }

  async probe(): Promise<void> {}
}
