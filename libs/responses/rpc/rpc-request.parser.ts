import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { ResponseCaller } from '../service/responses.service.js';
import type { ResponsesRpcCancel, ResponsesRpcRequest } from './responses-rpc.patterns.js';

const MAX_RUN_ID_LENGTH = 200;
// An OIDC token with many claims stays well under this; HTTP's header limit is of the same order.
const MAX_KEY_LENGTH = 16_384;

/** Checks a broker message's envelope; the body itself goes to the usual request parser. */
export function parseRpcRequest(data: unknown): { body: unknown; caller: ResponseCaller; runId: string | null; heartbeat: boolean; apiKey: string | undefined } {
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    throw new InvalidRequestError('The message must be an object: { body, owner?, headers?, runId? }.', null);
  }
  const message = data as Partial<ResponsesRpcRequest>;
  if (message.body === undefined) throw new InvalidRequestError("Missing 'body': the POST /v1/responses request body.", 'body');
  if (message.owner !== undefined && message.owner !== null && typeof message.owner !== 'string') {
    throw new InvalidRequestError("'owner' must be a string or null.", 'owner');
  }
  const headers = message.headers;
  if (headers !== undefined && (!headers || typeof headers !== 'object' || Array.isArray(headers))) {
    throw new InvalidRequestError("'headers' must be an object of strings.", 'headers');
  }
  if (message.apiKey !== undefined && (typeof message.apiKey !== 'string' || message.apiKey.length > MAX_KEY_LENGTH)) {
    throw new InvalidRequestError(`'apiKey' must be a string of at most ${MAX_KEY_LENGTH} characters.`, 'apiKey');
  }
  return {
    body: message.body,
    heartbeat: message.heartbeat === true,
    apiKey: message.apiKey || undefined,
    caller: { owner: message.owner ?? null, headers },
    runId: message.runId === undefined ? null : parseRunId(message.runId, 'runId'),
  };
}

export function parseCancel(data: unknown): string | null {
  const runId = (data as Partial<ResponsesRpcCancel> | null)?.runId;
  return typeof runId === 'string' && runId.length > 0 && runId.length <= MAX_RUN_ID_LENGTH ? runId : null;
}

function parseRunId(value: unknown, param: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_RUN_ID_LENGTH) {
    throw new InvalidRequestError(`'${param}' must be a non-empty string of at most ${MAX_RUN_ID_LENGTH} characters.`, param);
  }
  return value;
}
