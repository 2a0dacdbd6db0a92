import { createHash } from 'node:crypto';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { JsonObject } from '#tool-sdk/items.js';
import type { RelayPath } from '#core/upstream/upstream-relay.interface.js';
import { estimateItemTokens } from '#core/loop/model-context.service.js';
import type { AdmissionCost } from '#core/loop/request-limiter.interface.js';

/** A pass-through body checked just enough to route it: the model server checks the rest and its 4xx is relayed. */
export interface RelayRequest {
  path: RelayPath;
  body: JsonObject;
  model: string;
  stream: boolean;
  affinityKey: string;
  /** Its cost as known before the call, for the owner's token budgets (`relayCost`). */
  estimate: AdmissionCost;
}

/** The field each route cannot do without, as OpenAI names it in a 400. */
const REQUIRED: Record<RelayPath, string> = { '/chat/completions': 'messages', '/completions': 'prompt', '/embeddings': 'input' };

/** Characters of a prompt's opening that decide its server: enough to tell conversations apart, bounded for huge prompts. */
const AFFINITY_PREFIX_CHARS = 4096;

export function parseRelayRequest(path: RelayPath, raw: unknown, defaultModel: string | undefined): RelayRequest {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new InvalidRequestError('The request body must be a JSON object.', null);
  const body = { ...(raw as JsonObject) };
  if (body.model === undefined || body.model === null) {
    if (!defaultModel) throw new InvalidRequestError("'model' is required: name the model to call.", 'model', 'missing_required_parameter');
    body.model = defaultModel;
  }
  if (typeof body.model !== 'string' || body.model === '') throw new InvalidRequestError("'model' must be a non-empty string.", 'model', 'invalid_type');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw new InvalidRequestError("'stream' must be a boolean.", 'stream', 'invalid_type');
  }
  if (path === '/embeddings' && body.stream === true) throw new InvalidRequestError("'stream' is not supported for embeddings.", 'stream', 'unsupported_parameter');
  const required = REQUIRED[path];
  if (body[required] === undefined || body[required] === null) throw new InvalidRequestError(`'${required}' is required.`, required, 'missing_required_parameter');
  if (path === '/chat/completions' && (!Array.isArray(body.messages) || body.messages.length === 0)) {
    throw new InvalidRequestError("'messages' must be a non-empty array.", 'messages', 'invalid_type');
  }
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    throw new InvalidRequestError("'stream_options' is only allowed when 'stream' is true.", 'stream_options', 'invalid_value');
  }
  return { path, body, model: body.model, stream: body.stream === true, affinityKey: affinityKeyOf(path, body), estimate: relayCost(path, body) };
}

/**
 * A pass-through call's cost before it is made, as the loop estimates a
 * Responses request's (`admissionCost`): the prompt (chat messages and tools,
 * a completion's prompt, the texts to embed) at the gateway's token estimate,
 * plus the output bound the client set (`max_completion_tokens`, else
 * `max_tokens`) for each of its `n` choices. Without a bound the output is
 * charged when the answer's `usage` comes.
 */
export function relayCost(path: RelayPath, body: JsonObject): AdmissionCost {
  const parts = path === '/chat/completions' ? [body.messages, body.tools] : path === '/completions' ? [body.prompt, body.suffix] : [body.input];
  let prompt = 0;
  for (const part of parts) {
    if (typeof part === 'string') prompt += Math.ceil(Buffer.byteLength(part, 'utf8') / 3);
    else if (part && typeof part === 'object') prompt += estimateItemTokens(part);
  }
  if (path === '/embeddings') return { prompt, output: 0 };
  const bound = wholeOrZero(body.max_completion_tokens) || wholeOrZero(body.max_tokens);
  return { prompt, output: bound * Math.max(1, wholeOrZero(body.n), wholeOrZero(body.best_of)) };
}

const wholeOrZero = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/** Whether the client asked for the stream's usage chunk itself (`stream_options.include_usage`). */
export function clientAskedUsage(body: JsonObject): boolean {
  const options = body.stream_options as { include_usage?: unknown } | null | undefined;
  return !!options && typeof options === 'object' && options.include_usage === true;
}

/**
 * Which model server's prefix cache a call belongs to, as the Responses
 * pool keys it: the client's `prompt_cache_key`, else the opening every turn
 * of one conversation repeats (chat: the system messages and the first other
 * message; completions: the prompt's first characters). Embeddings share no
 * prefix cache; their key spreads them by content.
 */
export function affinityKeyOf(path: RelayPath, body: JsonObject): string {
  if (typeof body.prompt_cache_key === 'string' && body.prompt_cache_key !== '') return `key:${body.prompt_cache_key}`;
  const model = body.model as string;
  if (path === '/chat/completions') {
    const messages = body.messages as unknown[];
    const opening: unknown[] = [];
    for (const message of messages) {
      opening.push(message);
      const role = (message as { role?: unknown } | null)?.role;
      if (role !== 'system' && role !== 'developer') break;
    }
    return `prefix:${model}\0${digest(JSON.stringify(opening))}`;
  }
  const text = path === '/completions' ? body.prompt : body.input;
  const flat = typeof text === 'string' ? text : JSON.stringify(text ?? null);
  return `${path === '/completions' ? 'prefix' : 'embed'}:${model}\0${digest(flat.slice(0, AFFINITY_PREFIX_CHARS))}`;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
