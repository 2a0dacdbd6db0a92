import { createHash } from 'node:crypto';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { JsonObject } from '#tool-sdk/items.js';
import type { RelayPath } from '#core/upstream/upstream-relay.interface.js';

/** A pass-through body checked just enough to route it: the model server checks the rest and its 4xx is relayed. */
export interface RelayRequest {
  path: RelayPath;
  body: JsonObject;
  model: string;
  stream: boolean;
  affinityKey: string;
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
  return { path, body, model: body.model, stream: body.stream === true, affinityKey: affinityKeyOf(path, body) };
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
