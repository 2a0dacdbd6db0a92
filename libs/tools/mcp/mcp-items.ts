import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { frozenForms, type GatewayCall, type GatewayCallResult, mapFrozenOnce, newId, type PublicItem, type ToolOutput } from '#tool-sdk/index.js';
import { boundApprovalRequestId } from './mcp-approval-binding.js';
import type { McpTarget } from './mcp-target.js';

/**
 * The public MCP items, shaped as `wire-notes.md` and the OpenAI SDK types
 * describe them. Nothing here may carry declaration headers or tokens.
 */

/**
 * Absent fields are omitted, as OpenAI omits them: clients with strict
 * schemas (the AI SDK's) refuse `null` for a tool's `description` or
 * `annotations` and for the item's `error`.
 *
 * A kept (frozen) listing's `tools` are made once, frozen, with their JSON
 * text kept: the answer and its events splice that text in instead of
 * serializing every input schema again on each request the listing serves.
 */
export function listToolsItem(serverLabel: string, tools: readonly Tool[], error: string | null): PublicItem {
  const item: PublicItem = {
    id: newId('mcpl'),
    type: 'mcp_list_tools',
    server_label: serverLabel,
    tools: mapFrozenOnce(listedForms, tools, listedTool),
  };
  if (error !== null) item.error = error;
  return item;
}

/** The listed form of each kept listing: a cache keyed by the frozen listing (see `mapFrozenOnce`). */
const listedForms = frozenForms<Tool, Record<string, unknown>>();

function listedTool(tool: Tool): Record<string, unknown> {
  const listed: Record<string, unknown> = { name: tool.name };
  if (typeof tool.description === 'string') listed.description = tool.description;
  listed.input_schema = tool.inputSchema;
  const annotations = openAiAnnotations(tool.annotations);
  if (annotations) listed.annotations = annotations;
  return listed;
}

/** MCP's behaviour hints, named as OpenAI names them on a listed tool (`readOnlyHint` → `read_only`...). */
const HINTS: ReadonlyArray<[keyof NonNullable<Tool['annotations']>, string]> = [
  ['readOnlyHint', 'read_only'],
  ['destructiveHint', 'destructive'],
  ['idempotentHint', 'idempotent'],
  ['openWorldHint', 'open_world'],
];

function openAiAnnotations(annotations: Tool['annotations']): Record<string, boolean> | null {
  if (!annotations) return null;
  const out: Record<string, boolean> = {};
  for (const [hint, name] of HINTS) if (typeof annotations[hint] === 'boolean') out[name] = annotations[hint];
  return Object.keys(out).length > 0 ? out : null;
}

export function callItem(
  call: GatewayCall,
  serverLabel: string,
  toolName: string,
  state: { arguments: string; output: string | null; error: string | null; status: 'in_progress' | 'completed' | 'failed' },
): PublicItem {
  return {
    id: call.itemId,
    type: 'mcp_call',
    server_label: serverLabel,
    name: toolName,
    arguments: state.arguments,
    output: state.output,
    error: state.error,
    status: state.status,
    approval_request_id: call.approvalRequestId ?? null,
  };
}

export function finishedCallItem(result: GatewayCallResult, serverLabel: string, toolName: string): PublicItem {
  const completed = result.status === 'completed';
  return callItem(result.call, serverLabel, toolName, {
    arguments: result.call.arguments,
    output: completed ? result.output.text : null,
    error: completed ? null : (result.error?.message ?? result.output.text),
    status: completed ? 'completed' : 'failed',
  });
}

/** The request for approval, its id bound to the call and the declaration it was asked under (`mcp-approval-binding.ts`). */
export function approvalRequestItem(call: GatewayCall, serverLabel: string, toolName: string, target: McpTarget): PublicItem {
  const id = boundApprovalRequestId({ serverLabel, toolName, arguments: call.arguments }, target);
  return { id, type: 'mcp_approval_request', server_label: serverLabel, name: toolName, arguments: call.arguments };
}

type ContentBlock = CallToolResult['content'][number];

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'resource':
      return 'text' in block.resource && typeof block.resource.text === 'string' ? block.resource.text : `[resource ${block.resource.uri}]`;
    case 'resource_link':
      return `[resource link ${block.name}: ${block.uri}]`;
    case 'image':
      return `[image ${block.mimeType}]`;
    case 'audio':
      return `[audio ${block.mimeType}]`;
    default:
      return '';
  }
}

/**
 * What the model reads from a `tools/call` result: structured content as JSON
 * when the tool produced it (it is the machine-readable form), else the text
 * blocks joined by newlines, with non-text blocks named so the model knows
 * they exist. Servers from before `content` answer with `toolResult`.
 */
export function toToolOutput(result: Record<string, unknown>): ToolOutput {
  const isError = result.isError === true;
  const content = Array.isArray(result.content) ? (result.content as ContentBlock[]) : [];
  const text = content
    .map(blockText)
    .filter((t) => t.length > 0)
    .join('\n');
  const structured = result.structuredContent;
  let output: string;
  if (structured !== undefined && structured !== null && !(isError && text)) output = JSON.stringify(structured);
  else if (content.length === 0 && 'toolResult' in result) output = JSON.stringify(result.toolResult);
  else output = text;
  return { text: output, isError, data: structured === undefined ? undefined : { structuredContent: structured } };
}
