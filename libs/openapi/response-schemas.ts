import type { JsonSchema } from './dto-schema.js';
import { OPEN_RESPONSES_SCHEMAS } from './openresponses-schemas.js';

/**
 * What each route answers on success, as JSON Schema (2020-12) over the
 * document's components. The Responses surface reuses the Open Responses
 * spec's own schemas (vendored in openresponses-schemas.ts); the other
 * surfaces are described here in OpenAI's (or Anthropic's) public shapes,
 * required fields and their types, other fields allowed. The document's CI
 * check (test/openapi.e2e-spec.ts) validates real answers of every route
 * against these, so a shape that drifts from the code fails there.
 */

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const str: JsonSchema = { type: 'string' };
const int: JsonSchema = { type: 'integer' };
const bool: JsonSchema = { type: 'boolean' };
const anyObject: JsonSchema = { type: 'object' };
const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
const constant = (value: string): JsonSchema => ({ type: 'string', const: value });

/** An object with these required properties (and, optionally, these optional ones); other properties allowed. */
function object(required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}): JsonSchema {
  return { type: 'object', required: Object.keys(required), properties: { ...required, ...optional } };
}

/** OpenAI's cursor list: `{ object: "list", data, has_more, first_id?, last_id? }`. */
function list(item: JsonSchema): JsonSchema {
  return object({ object: constant('list'), data: { type: 'array', items: item }, has_more: bool }, { first_id: nullable(str), last_id: nullable(str) });
}

const deleted = (objectName: string): JsonSchema => object({ id: str, object: constant(objectName), deleted: { const: true } });

/**
 * Item types the gateway returns beyond those the Open Responses spec
 * describes (its own tools' calls, client-owned tool calls), in OpenAI's
 * shapes: the document names them and their common fields.
 */
const TOOL_ITEM_TYPES = [
  'mcp_list_tools',
  'mcp_call',
  'mcp_approval_request',
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'custom_tool_call',
  'custom_tool_call_output',
  'tool_search_call',
  'tool_search_output',
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
  'local_shell_call',
  'local_shell_call_output',
  'computer_call',
  'computer_call_output',
];

/** The Open Responses spec's schemas, with its item union opened to the gateway's tool items. */
function openResponsesComponents(): Record<string, JsonSchema> {
  const schemas = structuredClone(OPEN_RESPONSES_SCHEMAS);
  const items = schemas.ItemField as { oneOf: JsonSchema[]; discriminator?: unknown };
  // The spec's discriminator maps only its own types; the union stays a plain oneOf.
  const { discriminator: _mapping, ...union } = items;
  schemas.ItemField = { ...union, oneOf: [...items.oneOf, ref('GatewayToolItem')] };
  return schemas;
}

const ITEM = ref('Item');
const FILE = object({ id: str, object: constant('file'), bytes: int, created_at: int, filename: str, purpose: str });
const VECTOR_STORE = object({
  id: str,
  object: constant('vector_store'),
  created_at: int,
  name: nullable(str),
  status: str,
  usage_bytes: int,
  file_counts: object({ in_progress: int, completed: int, failed: int, cancelled: int, total: int }),
});
const VECTOR_STORE_FILE = object({ id: str, object: constant('vector_store.file'), vector_store_id: str, status: str, created_at: int, usage_bytes: int });
const FILE_BATCH = object({ id: str, object: constant('vector_store.files_batch'), vector_store_id: str, status: str, created_at: int, file_counts: anyObject });
const CONTAINER = object({ id: str, object: constant('container'), name: str, created_at: int, status: str });
const CONTAINER_FILE = object({ id: str, object: constant('container.file'), container_id: str, path: str, bytes: int, created_at: int, source: str });
const BATCH = object({
  id: str,
  object: constant('batch'),
  endpoint: str,
  input_file_id: str,
  completion_window: str,
  status: str,
  created_at: int,
  request_counts: object({ total: int, completed: int, failed: int }),
});
const CONSOLE_PAGE = object({ data: { type: 'array', items: anyObject }, has_more: bool, last_id: nullable(str) });
const USAGE_PAGE = object({
  object: constant('page'),
  data: {
    type: 'array',
    items: object({
      object: constant('bucket'),
      start_time: int,
      end_time: int,
      results: { type: 'array', items: object({ object: constant('usage_result'), num_model_requests: int, input_tokens: int, output_tokens: int }) },
    }),
  },
  has_more: bool,
});

/** The components every answer schema refers to. */
export function responseComponents(): Record<string, JsonSchema> {
  return {
    ...openResponsesComponents(),
    GatewayToolItem: object({ type: { type: 'string', enum: TOOL_ITEM_TYPES } }, { id: str, status: str }),
    // An input or conversation item: the spec's output items, or any input item (messages with input parts, tool outputs).
    Item: object({ type: str }, { id: str }),
    Conversation: object({ id: str, object: constant('conversation'), created_at: int, metadata: anyObject }),
    File: FILE,
    VectorStore: VECTOR_STORE,
    VectorStoreFile: VECTOR_STORE_FILE,
    VectorStoreFileBatch: FILE_BATCH,
    Container: CONTAINER,
    ContainerFile: CONTAINER_FILE,
    Batch: BATCH,
    UsagePage: USAGE_PAGE,
    ConsolePage: CONSOLE_PAGE,
    AnthropicMessage: object({
      id: str,
      type: constant('message'),
      role: constant('assistant'),
      content: { type: 'array', items: object({ type: str }) },
      model: str,
      stop_reason: nullable(str),
      usage: object({ input_tokens: int, output_tokens: int }),
    }),
    AnthropicErrorEnvelope: object({ type: constant('error'), error: object({ type: str, message: str }) }),
  };
}

/** One success answer: its status and, per content type, its schema. */
export interface SuccessDoc {
  status?: number;
  json?: JsonSchema;
  /** Other content types (`text/event-stream`, `text/plain`, `application/octet-stream`...). */
  other?: Record<string, JsonSchema>;
}

const bytes: Record<string, JsonSchema> = { 'application/octet-stream': { type: 'string', contentMediaType: 'application/octet-stream' } };
const sse: Record<string, JsonSchema> = { 'text/event-stream': { type: 'string', description: 'Server-sent events, one JSON event per data line.' } };

/** The success answer of each route, keyed `METHOD /path` as the router has them. */
export const SUCCESS_DOCS: Record<string, SuccessDoc> = {
  'POST /v1/responses': { json: ref('ResponseResource'), other: sse },
  'GET /v1/responses/:id': { json: ref('ResponseResource'), other: sse },
  'DELETE /v1/responses/:id': { json: deleted('response.deleted') },
  'POST /v1/responses/:id/cancel': { json: ref('ResponseResource') },
  'GET /v1/responses/:id/input_items': { json: list(ITEM) },
  'POST /v1/responses/compact': { json: ref('CompactResource') },
  'POST /v1/responses/input_tokens': { json: object({ object: constant('response.input_tokens'), input_tokens: int }) },

  'POST /v1/conversations': { json: ref('Conversation') },
  'GET /v1/conversations/:id': { json: ref('Conversation') },
  'POST /v1/conversations/:id': { json: ref('Conversation') },
  'DELETE /v1/conversations/:id': { json: deleted('conversation.deleted') },
  'GET /v1/conversations/:id/items': { json: list(ITEM) },
  'POST /v1/conversations/:id/items': { json: list(ITEM) },
  'GET /v1/conversations/:id/items/:itemId': { json: ITEM },
  'DELETE /v1/conversations/:id/items/:itemId': { json: ref('Conversation') },

  'GET /v1/models': {
    json: list(
      object(
        { id: str, object: constant('model'), context_window: nullable(int), max_output_tokens: nullable(int) },
        {
          max_model_len: nullable(int),
          input_modalities: nullable({ type: 'array', items: str }),
          reasoning: { anyOf: [bool, { type: 'array', items: str }, { type: 'null' }] },
        },
      ),
    ),
  },
  'GET /health': { json: object({ status: constant('ok') }, { worker: int }) },
  'GET /ready': { json: object({ status: constant('ready'), state: constant('ok'), upstream: { type: 'string', enum: ['ok', 'unavailable'] } }) },
  'GET /openapi.json': { json: object({ openapi: str, info: anyObject, paths: anyObject }) },
  'GET /metrics': { other: { 'text/plain': { type: 'string', description: 'Prometheus text exposition format.' } } },
  'GET /v1/usage': { json: ref('UsagePage') },

  'POST /v1/files': { json: ref('File') },
  'GET /v1/files': { json: list(ref('File')) },
  'GET /v1/files/:id': { json: ref('File') },
  'DELETE /v1/files/:id': { json: deleted('file') },
  'GET /v1/files/:id/content': { other: bytes },

  'POST /v1/vector_stores': { json: ref('VectorStore') },
  'GET /v1/vector_stores': { json: list(ref('VectorStore')) },
  'GET /v1/vector_stores/:id': { json: ref('VectorStore') },
  'POST /v1/vector_stores/:id': { json: ref('VectorStore') },
  'DELETE /v1/vector_stores/:id': { json: deleted('vector_store.deleted') },
  'POST /v1/vector_stores/:id/search': {
    json: object({
      object: constant('vector_store.search_results.page'),
      search_query: { anyOf: [str, { type: 'array', items: str }] },
      data: {
        type: 'array',
        items: object({ file_id: str, filename: str, score: { type: 'number' }, content: { type: 'array', items: object({ type: constant('text'), text: str }) } }),
      },
      has_more: bool,
    }),
  },
  'POST /v1/vector_stores/:id/files': { json: ref('VectorStoreFile') },
  'GET /v1/vector_stores/:id/files': { json: list(ref('VectorStoreFile')) },
  'GET /v1/vector_stores/:id/files/:fileId': { json: ref('VectorStoreFile') },
  'POST /v1/vector_stores/:id/files/:fileId': { json: ref('VectorStoreFile') },
  'DELETE /v1/vector_stores/:id/files/:fileId': { json: deleted('vector_store.file.deleted') },
  'GET /v1/vector_stores/:id/files/:fileId/content': {
    json: object({ object: constant('vector_store.file_content.page'), data: { type: 'array', items: object({ type: constant('text'), text: str }) }, has_more: bool }),
  },
  'POST /v1/vector_stores/:id/file_batches': { json: ref('VectorStoreFileBatch') },
  'GET /v1/vector_stores/:id/file_batches/:batchId': { json: ref('VectorStoreFileBatch') },
  'POST /v1/vector_stores/:id/file_batches/:batchId/cancel': { json: ref('VectorStoreFileBatch') },
  'GET /v1/vector_stores/:id/file_batches/:batchId/files': { json: list(ref('VectorStoreFile')) },

  'POST /v1/containers': { json: ref('Container') },
  'GET /v1/containers': { json: list(ref('Container')) },
  'GET /v1/containers/:id': { json: ref('Container') },
  'DELETE /v1/containers/:id': { json: deleted('container.deleted') },
  'POST /v1/containers/:id/files': { json: ref('ContainerFile') },
  'GET /v1/containers/:id/files': { json: list(ref('ContainerFile')) },
  'GET /v1/containers/:id/files/:fileId': { json: ref('ContainerFile') },
  'DELETE /v1/containers/:id/files/:fileId': { json: deleted('container.file.deleted') },
  'GET /v1/containers/:id/files/:fileId/content': { other: bytes },

  'POST /v1/batches': { json: ref('Batch') },
  'GET /v1/batches': { json: list(ref('Batch')) },
  'GET /v1/batches/:id': { json: ref('Batch') },
  'POST /v1/batches/:id/cancel': { json: ref('Batch') },

  // Passed to the upstream and back as it answered: OpenAI's shapes, as the upstream speaks them.
  'POST /v1/chat/completions': { json: object({ id: str, object: constant('chat.completion'), choices: { type: 'array', items: anyObject } }), other: sse },
  'POST /v1/completions': { json: object({ id: str, object: constant('text_completion'), choices: { type: 'array', items: anyObject } }), other: sse },
  'POST /v1/embeddings': {
    json: object({
      object: constant('list'),
      data: { type: 'array', items: object({ object: constant('embedding'), index: int, embedding: { anyOf: [{ type: 'array', items: { type: 'number' } }, str] } }) },
    }),
  },

  'POST /v1/messages': { json: ref('AnthropicMessage'), other: sse },
  'POST /v1/messages/count_tokens': { json: object({ input_tokens: int }) },

  'GET /console': { other: { 'text/html': str } },
  'GET /console/assets/:name': { other: { 'text/javascript': str, 'text/css': str, 'text/html': str } },
  'GET /console/api/sections': { json: object({ object: constant('list'), data: { type: 'array', items: object({ name: str, title: str }) } }) },
  'GET /console/api/responses': { json: ref('ConsolePage') },
  'GET /console/api/responses/:id': {
    json: object({ id: str, owner: nullable(str), created_at: int, response: ref('ResponseResource'), input_items: { type: 'array', items: ITEM }, tools: { type: 'array' } }),
  },
  'GET /console/api/conversations': { json: ref('ConsolePage') },
  'GET /console/api/conversations/:id': { json: object({ id: str, owner: nullable(str), created_at: int, metadata: anyObject, items: ref('ConsolePage') }) },
  'GET /console/api/background': { json: ref('ConsolePage') },
  'GET /console/api/sections/:name': { json: ref('ConsolePage') },
  'GET /console/api/sections/:name/:id': { json: object({ id: str, owner: nullable(str) }) },
  'GET /console/api/sections/:name/:id/files': { json: ref('ConsolePage') },
  'GET /console/api/usage': { json: ref('UsagePage') },
  'GET /console/api/responses/:id/timeline': {
    json: object({
      timeline: nullable(
        object(
          {
            responseId: str,
            owner: nullable(str),
            model: str,
            surface: str,
            startedAt: int,
            durationMs: { type: 'number' },
            status: str,
            rounds: { type: 'array', items: anyObject },
            tools: { type: 'array', items: anyObject },
          },
          { error: str },
        ),
      ),
    }),
  },
  'GET /console/api/stats': {
    json: object({
      range: str,
      bucket_ms: int,
      buckets: { type: 'array', items: int },
      by_model: { type: 'array', items: object({ key: str, requests: { type: 'array', items: int }, tokens: { type: 'array', items: int } }) },
      by_owner: { type: 'array', items: object({ key: str, requests: { type: 'array', items: int }, tokens: { type: 'array', items: int } }) },
      runs: { type: 'array', items: int },
      failed_runs: { type: 'array', items: int },
      mean_latency_ms: { type: 'array', items: nullable(int) },
      totals: object({ runs: int, failed_runs: int, requests: int, input_tokens: int, output_tokens: int }),
    }),
  },
};

/** The error envelope of a route: Anthropic's on the Messages surface, OpenAI's everywhere else. */
export function errorSchemaOf(path: string): JsonSchema {
  return ref(path === '/v1/messages' || path.startsWith('/v1/messages/') ? 'AnthropicErrorEnvelope' : 'ErrorEnvelope');
}
