import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Validates what the gateway emits against the Open Responses OpenAPI spec
 * (`shared/reference/openresponses-openapi.json`).
 *
 * The spec covers messages, function calls, reasoning and compaction. Items
 * and events of the gateway-owned and client-owned tool types it does not
 * describe (MCP, web search, custom tools...) are checked against the shapes
 * in `wire-notes.md`, added here as extension schemas; nothing is waived.
 */
const SPEC_PATH = resolve(process.cwd(), '../shared/reference/openresponses-openapi.json');

const str = { type: 'string' };
const nullableStr = { anyOf: [{ type: 'string' }, { type: 'null' }] };
const status = { type: 'string', enum: ['in_progress', 'completed', 'incomplete', 'failed', 'searching', 'calling', 'interpreting'] };

const EXTENSION_ITEMS: Record<string, object> = {
  CustomToolCallExt: {
    type: 'object',
    required: ['type', 'id', 'call_id', 'name', 'input', 'status'],
    properties: { type: { const: 'custom_tool_call' }, id: str, call_id: str, name: str, input: str, namespace: str, status },
  },
  McpListToolsExt: {
    type: 'object',
    required: ['type', 'id', 'server_label', 'tools'],
    properties: {
      type: { const: 'mcp_list_tools' },
      id: str,
      server_label: str,
      tools: {
        type: 'array',
        items: { type: 'object', required: ['name', 'input_schema'], properties: { name: str, description: nullableStr, input_schema: { type: 'object' } } },
      },
      error: nullableStr,
    },
  },
  McpCallExt: {
    type: 'object',
    required: ['type', 'id', 'server_label', 'name', 'arguments', 'status'],
    properties: {
      type: { const: 'mcp_call' },
      id: str,
      server_label: str,
      name: str,
      arguments: str,
      output: nullableStr,
      error: { anyOf: [{ type: 'string' }, { type: 'null' }, { type: 'object' }] },
      status,
      approval_request_id: nullableStr,
    },
  },
  McpApprovalRequestExt: {
    type: 'object',
    required: ['type', 'id', 'server_label', 'name', 'arguments'],
    properties: { type: { const: 'mcp_approval_request' }, id: str, server_label: str, name: str, arguments: str },
  },
  WebSearchCallExt: {
    type: 'object',
    required: ['type', 'id', 'status'],
    properties: {
      type: { const: 'web_search_call' },
      id: str,
      status,
      action: {
        type: 'object',
        required: ['type'],
        properties: {
          type: { enum: ['search', 'open_page', 'find_in_page'] },
          query: str,
          queries: { type: 'array', items: str },
          sources: { type: 'array', items: { type: 'object', required: ['type', 'url'], properties: { type: { const: 'url' }, url: str } } },
        },
      },
    },
  },
  FileSearchCallExt: {
    type: 'object',
    required: ['type', 'id', 'status', 'queries'],
    properties: {
      type: { const: 'file_search_call' },
      id: str,
      status,
      queries: { type: 'array', items: str },
      results: {
        anyOf: [
          { type: 'null' },
          {
            type: 'array',
            items: {
              type: 'object',
              required: ['file_id', 'filename', 'score', 'text', 'attributes'],
              properties: { file_id: str, filename: str, score: { type: 'number', minimum: 0, maximum: 1 }, text: str, attributes: { type: 'object' } },
            },
          },
        ],
      },
    },
  },
  CodeInterpreterCallExt: {
    type: 'object',
    required: ['type', 'id', 'status', 'code', 'container_id'],
    properties: { type: { const: 'code_interpreter_call' }, id: str, status, code: nullableStr, container_id: str },
  },
  // The openai SDK's `ResponseToolSearchCall`: `arguments` is any JSON value.
  ToolSearchCallExt: {
    type: 'object',
    required: ['type', 'id', 'call_id', 'execution', 'arguments', 'status'],
    properties: { type: { const: 'tool_search_call' }, id: str, call_id: nullableStr, execution: { enum: ['server', 'client'] }, arguments: {}, status },
  },
};

const EXTENSION_TOOL = {
  type: 'object',
  required: ['type'],
  properties: { type: { enum: ['custom', 'namespace', 'mcp', 'web_search', 'web_search_preview', 'file_search', 'code_interpreter', 'tool_search'] } },
};

/** OpenAI's `container_file_citation` annotation (`ResponseOutputText.ContainerFileCitation` in the SDK). */
const CONTAINER_FILE_CITATION = {
  type: 'object',
  required: ['type', 'container_id', 'file_id', 'filename', 'start_index', 'end_index'],
  properties: {
    type: { const: 'container_file_citation' },
    container_id: str,
    file_id: str,
    filename: str,
    start_index: { type: 'integer', minimum: 0 },
    end_index: { type: 'integer', minimum: 0 },
  },
};

/** OpenAI's `file_citation` annotation (`ResponseOutputText.FileCitation` in the SDK). */
const FILE_CITATION = {
  type: 'object',
  required: ['type', 'file_id', 'filename', 'index'],
  additionalProperties: false,
  properties: { type: { const: 'file_citation' }, file_id: str, filename: str, index: { type: 'integer', minimum: 0 } },
};

/** Events of extension item types: the common item-event fields, typed. */
const EXTENSION_EVENT = {
  type: 'object',
  required: ['type', 'sequence_number', 'output_index', 'item_id'],
  properties: { type: str, sequence_number: { type: 'integer' }, output_index: { type: 'integer' }, item_id: str },
};

export class OpenResponsesValidator {
  private readonly response: ValidateFunction;
  private readonly events = new Map<string, ValidateFunction>();
  private readonly extensionEvent: ValidateFunction;
  private readonly extensionEventPrefixes = [
    'response.custom_tool_call_input.',
    'response.mcp_list_tools.',
    'response.mcp_call.',
    'response.mcp_call_arguments.',
    'response.web_search_call.',
    'response.file_search_call.',
    'response.code_interpreter_call.',
    'response.code_interpreter_call_code.',
  ];

  constructor(options: { reasoningEventStyle?: 'openai' | 'openresponses' } = {}) {
    const spec = JSON.parse(readFileSync(SPEC_PATH, 'utf8'));
    const schemas = spec.components.schemas as Record<string, any>;
    Object.assign(schemas, EXTENSION_ITEMS, { ExtensionTool: EXTENSION_TOOL });
    schemas.ItemField = { ...schemas.ItemField, oneOf: [...schemas.ItemField.oneOf, ...Object.keys(EXTENSION_ITEMS).map((k) => ({ $ref: `#/components/schemas/${k}` }))] };
    delete schemas.ItemField.discriminator;
    schemas.Tool = { oneOf: [...schemas.Tool.oneOf, { $ref: '#/components/schemas/ExtensionTool' }] };
    // The spec knows url citations only; file_search adds OpenAI's file_citation.
    schemas.FileCitationExt = FILE_CITATION;
    schemas.ContainerFileCitationExt = CONTAINER_FILE_CITATION;
    schemas.Annotation = {
      oneOf: [...schemas.Annotation.oneOf, { $ref: '#/components/schemas/FileCitationExt' }, { $ref: '#/components/schemas/ContainerFileCitationExt' }],
    };
    const ajv = new Ajv({ strict: false, allErrors: true, discriminator: false });
    addFormats(ajv);
    ajv.addSchema({ $id: 'spec', components: spec.components });
    this.response = ajv.getSchema('spec#/components/schemas/ResponseResource')!;
    for (const [name, schema] of Object.entries(schemas)) {
      const type = schema?.properties?.type?.enum?.[0];
      if (name.endsWith('StreamingEvent') && typeof type === 'string') {
        this.events.set(type, ajv.getSchema(`spec#/components/schemas/${name}`)!);
      }
    }
    // The OpenAI SDK names reasoning text events `response.reasoning_text.*`; the spec `response.reasoning.*`.
    // Same payload: validate the SDK names against the spec's schema with the type renamed.
    if (options.reasoningEventStyle !== 'openresponses') {
      this.renames.set('response.reasoning_text.delta', 'response.reasoning.delta');
      this.renames.set('response.reasoning_text.done', 'response.reasoning.done');
    }
    this.extensionEvent = ajv.compile(EXTENSION_EVENT);
  }

  private readonly renames = new Map<string, string>();

  /** Throws with the schema errors when `body` is not a valid ResponseResource. */
  assertResponse(body: unknown): void {
    if (!this.response(body)) {
      throw new Error(`response does not match ResponseResource: ${JSON.stringify(this.response.errors?.slice(0, 5), null, 1)}\n${JSON.stringify(body).slice(0, 2000)}`);
    }
  }

  assertEvent(event: Record<string, unknown>): void {
    const type = String(event.type);
    const specType = this.renames.get(type) ?? type;
    const validate = this.events.get(specType);
    if (validate) {
      const candidate = specType === type ? event : { ...event, type: specType };
      if (!validate(candidate)) {
        throw new Error(`event ${type} does not match the spec: ${JSON.stringify(validate.errors?.slice(0, 5), null, 1)}\n${JSON.stringify(event).slice(0, 2000)}`);
      }
      return;
    }
    if (this.extensionEventPrefixes.some((p) => type.startsWith(p))) {
      if (!this.extensionEvent(event)) throw new Error(`event ${type} lacks item fields: ${JSON.stringify(this.extensionEvent.errors)}`);
      return;
    }
    throw new Error(`event type ${type} is neither in the spec nor a known tool event`);
  }
}
