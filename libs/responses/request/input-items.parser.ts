import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { ToolHandlerExplorer } from '#core/handlers/tool-handler.explorer.js';
import { newId } from '#tool-sdk/ids.js';
import type { ReasoningSealer } from '#core/loop/reasoning-sealer.interface.js';
import type { JsonObject, PublicItem } from '#tool-sdk/items.js';

const ROLES = new Set(['user', 'system', 'developer', 'assistant']);
const ID_PREFIX: Record<string, string> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  custom_tool_call: 'ctc',
  custom_tool_call_output: 'ctco',
  reasoning: 'rs',
  mcp_approval_response: 'mcpa',
};

function fail(message: string, param: string): never {
  throw new InvalidRequestError(message, param);
}

function str(item: JsonObject, field: string, path: string, optional = false): void {
  const v = item[field];
  if (v === undefined || v === null) {
    if (optional) return;
    fail(`${path}.${field} is required.`, `${path}.${field}`);
  }
  if (typeof v !== 'string') fail(`${path}.${field} must be a string.`, `${path}.${field}`);
}

function output(item: JsonObject, path: string): void {
  const v = item.output;
  if (typeof v === 'string') return;
  if (Array.isArray(v)) {
    v.forEach((part, j) => contentPart(part, `${path}.output[${j}]`, 'user'));
    return;
  }
  fail(`${path}.output must be a string or an array of content parts.`, `${path}.output`);
}

function contentPart(part: unknown, path: string, role: string): void {
  if (!part || typeof part !== 'object' || Array.isArray(part)) fail(`${path} must be an object.`, path);
  const p = part as JsonObject;
  switch (p.type) {
    case 'input_text':
    case 'output_text':
    case 'text':
      return str(p, 'text', path);
    case 'refusal':
      return str(p, 'refusal', path);
    case 'input_image':
      if (typeof p.image_url !== 'string' && typeof p.file_id !== 'string') {
        fail(`${path} needs image_url or file_id.`, `${path}.image_url`);
      }
      // `original` (full resolution, Codex with newer models) is sent to the model server as `high`, its nearest.
      if (p.detail !== undefined && p.detail !== null && !['low', 'high', 'auto', 'original'].includes(String(p.detail))) {
        fail(`${path}.detail must be "low", "high", "auto" or "original".`, `${path}.detail`);
      }
      return;
    case 'input_file':
      return inputFile(p, path);
    default:
      fail(`${path}.type "${String(p.type)}" is not a known content part type${role ? ` for a ${role} message` : ''}.`, `${path}.type`);
  }
}

/**
 * A document in a message: by `file_id` (the Files API) or inline `file_data`
 * with its `filename` (the extension says how to read it). `file_url` is not
 * fetched: the gateway does not reach out to URLs a tenant names.
 */
function inputFile(p: JsonObject, path: string): void {
  const given = ['file_id', 'file_data', 'file_url'].filter((f) => p[f] !== undefined && p[f] !== null);
  if (given.length !== 1) fail(`${path} needs exactly one of file_id or file_data (with filename).`, `${path}.file_id`);
  if (given[0] === 'file_url') fail(`${path}.file_url is not fetched by this gateway; upload the file (file_id) or send it inline (file_data).`, `${path}.file_url`);
  str(p, given[0], path);
  if (given[0] === 'file_data') {
    str(p, 'filename', path);
    if ((p.filename as string).trim() === '') fail(`${path}.filename must not be empty.`, `${path}.filename`);
  } else str(p, 'filename', path, true);
}

/** Item types that carry a `status` once stored; clients may omit it, the API always returns it. */
const STATUS_TYPES = new Set(['message', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output']);

/**
 * The canonical form of a validated item, as stored and as `input_items` and
 * conversation items return it: shorthand message content becomes a list of
 * typed parts and every item carries a status. Clients that read stored
 * items back (the Agents SDK's conversation session) rely on both.
 */
function canonicalize(item: JsonObject): void {
  if (item.type === 'message' && typeof item.content === 'string') {
    item.content = [item.role === 'assistant' ? { type: 'output_text', text: item.content, annotations: [] } : { type: 'input_text', text: item.content }];
  }
  if (STATUS_TYPES.has(item.type as string) && (item.status === undefined || item.status === null)) item.status = 'completed';
}

function message(item: JsonObject, path: string): void {
  const role = item.role;
  if (typeof role !== 'string' || !ROLES.has(role)) {
    fail(`${path}.role must be one of user, system, developer, assistant.`, `${path}.role`);
  }
  const content = item.content;
  if (typeof content !== 'string') {
    if (!Array.isArray(content)) fail(`${path}.content must be a string or an array of content parts.`, `${path}.content`);
    content.forEach((part, j) => contentPart(part, `${path}.content[${j}]`, role));
  }
  if (item.phase !== undefined && item.phase !== null) {
    if (role !== 'assistant') fail(`${path}.phase is only valid on assistant messages.`, `${path}.phase`);
    if (item.phase !== 'commentary' && item.phase !== 'final_answer') {
      fail(`${path}.phase must be "commentary" or "final_answer".`, `${path}.phase`);
    }
  }
}

/**
 * A copy of a stored item in canonical form: items stored before input was
 * canonicalized on the way in still read back in the shape clients expect.
 */
export function canonicalItem(item: PublicItem): PublicItem {
  const copy = { ...(item as JsonObject) };
  canonicalize(copy);
  return copy as PublicItem;
}

/**
 * Validates `input` (a string or an item list) and gives every item an id.
 * Item types contributed by tool modules (MCP, web search...) are accepted
 * when a module claims them; anything else is a 400 naming its index.
 */
export function parseInputItems(input: unknown, explorer: ToolHandlerExplorer, root = 'input', reasoning?: ReasoningSealer): PublicItem[] {
  if (typeof input === 'string') {
    return [{ type: 'message', id: newId('msg'), role: 'user', content: [{ type: 'input_text', text: input }], status: 'completed' }];
  }
  if (!Array.isArray(input)) fail(`${root} must be a string or an array of input items.`, root);
  return input.map((raw, i) => {
    const path = `${root}[${i}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) fail(`${path} must be an object.`, path);
    const item = { ...(raw as JsonObject) };
    // EasyInputMessage: `{role, content}` without a type.
    if (item.type === undefined && item.role !== undefined) item.type = 'message';
    const type = item.type;
    if (typeof type !== 'string') fail(`${path}.type is required.`, `${path}.type`);
    switch (type) {
      case 'message':
        message(item, path);
        break;
      case 'function_call':
        str(item, 'call_id', path);
        str(item, 'name', path);
        str(item, 'arguments', path);
        str(item, 'namespace', path, true);
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
        str(item, 'call_id', path);
        output(item, path);
        break;
      case 'custom_tool_call':
        str(item, 'call_id', path);
        str(item, 'name', path);
        str(item, 'input', path);
        str(item, 'namespace', path, true);
        break;
      case 'reasoning':
        if (item.summary !== undefined && !Array.isArray(item.summary)) fail(`${path}.summary must be an array.`, `${path}.summary`);
        if (item.content !== undefined && item.content !== null && !Array.isArray(item.content)) {
          fail(`${path}.content must be an array.`, `${path}.content`);
        }
        str(item, 'encrypted_content', path, true);
        // Reasoning this gateway sealed is opened here, so a tampered token is a 400 before anything runs.
        if (typeof item.encrypted_content === 'string' && reasoning?.recognizes(item.encrypted_content)) reasoning.open(item.encrypted_content, `${path}.encrypted_content`);
        item.summary ??= [];
        break;
      case 'item_reference':
        // Resolved against the caller's stored items when the response runs; the id is the whole item.
        str(item, 'id', path);
        if (item.id === '') fail(`${path}.id must not be empty.`, `${path}.id`);
        return item as PublicItem;
      case 'mcp_approval_response':
        if (!explorer.handlerForItemType('mcp_approval_request')) fail(`${path}.type "${type}" needs the MCP tool module.`, `${path}.type`);
        str(item, 'approval_request_id', path);
        if (typeof item.approve !== 'boolean') fail(`${path}.approve must be a boolean.`, `${path}.approve`);
        break;
      default: {
        // Tools' history items, or item types other modules own (`@InputItemProvider`), with their checks.
        const own = explorer.inputItemHandler(type);
        if (!explorer.handlerForItemType(type) && !own) fail(`${path}.type "${type}" is not a supported input item type.`, `${path}.type`);
        own?.validate?.(item, path);
      }
    }
    if (typeof item.id !== 'string' || item.id.length === 0) item.id = newId(ID_PREFIX[type] ?? 'item');
    canonicalize(item);
    return item as PublicItem;
  });
}
