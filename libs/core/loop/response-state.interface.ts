import type { JsonObject, ModelItem, PublicItem } from '#tool-sdk/items.js';
import type { PriorState, ResponseRequest } from './response-request.js';

export const RESPONSE_STATE = Symbol('RESPONSE_STATE');

/** Everything a finished run leaves behind, for storage and continuation. */
export interface CompletedRun {
  request: ResponseRequest;
  /** The public response object sent with the terminal event. */
  response: JsonObject;
  /** What this turn added to the model's transcript (translated input, outputs, gateway call pairs). */
  modelItems: ModelItem[];
  /** Effective public tool declarations, secrets removed. */
  tools: readonly JsonObject[];
  /**
   * The state this run continued from, with `untranslated` items already
   * translated into `modelItems`: prior + `modelItems` is the whole transcript,
   * which is what a continuation of this response starts from.
   */
  prior?: PriorState;
}

/**
 * Where conversation state lives. The loop asks it for the state a request
 * continues from, and hands it every finished run *before* the terminal event
 * is sent, so that a response is readable once a client has seen it end.
 */
export interface ResponseStateStore {
  /** Throws `NotFoundError` (code `previous_response_not_found`) for an unknown id. */
  load(request: ResponseRequest): Promise<PriorState | null>;
  save(run: CompletedRun): Promise<void>;
  /**
   * The request's input with each `item_reference` replaced by the caller's
   * own stored item of that id (from a stored response or a conversation).
   * Throws `InvalidRequestError` naming `input[i].id` for an id it cannot find.
   * Without it, a reference is refused: there is nothing to resolve it against.
   */
  resolveReferences?(request: ResponseRequest): Promise<PublicItem[]>;
  /** The run failed after it started; continuation state tied to it should be dropped. */
  discard?(request: ResponseRequest, responseId: string): Promise<void>;
  /** Readiness of whatever holds the state; throws (e.g. `StoreUnavailableError`) when it cannot be reached. */
  probe?(): Promise<void>;
}
