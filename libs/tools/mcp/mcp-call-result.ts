import type { JsonRpcAnswer } from './mcp-http.transport.js';
import type { CompiledSchemaCache } from './mcp-schema-validator.js';
import type { McpSdk } from './mcp-sdk.js';

/** The string fields each kind of content block must carry (the SDK's `ContentBlockSchema`). */
const BLOCK_FIELDS: Readonly<Record<string, readonly string[]>> = {
  text: ['text'],
  image: ['data', 'mimeType'],
  audio: ['data', 'mimeType'],
  resource_link: ['uri', 'name'],
  resource: [],
};

/**
 * A `tools/call` answer read without the SDK's protocol layer (see
 * `McpHttpTransport.request`), held to what the SDK's client holds a call to:
 * a JSON-RPC error is the SDK's `McpError` with the server's code, message and
 * data; a result must have the shape of `CallToolResultSchema` (`content` a
 * list of known blocks with their fields, `structuredContent` an object,
 * `isError` a boolean; the image and audio data's base64 is not decoded
 * here); and a tool that declared an `outputSchema` must answer with
 * structured content that the schema accepts, unless it reports an error.
 * What fails is thrown, as the SDK would reject the call.
 */
export function checkedCallResult(
  answer: JsonRpcAnswer,
  call: { toolName: string; outputSchema?: object },
  schemas: CompiledSchemaCache,
  sdk: Pick<McpSdk, 'McpError' | 'ErrorCode'>,
): Record<string, unknown> {
  if (answer.error !== undefined) {
    const { code, message, data } = answer.error;
    throw new sdk.McpError(typeof code === 'number' ? code : sdk.ErrorCode.InternalError, typeof message === 'string' ? message : String(message), data);
  }
  const result = answer.result;
  const problem = shapeProblem(result);
  if (problem) throw new Error(`The tools/call result is not a CallToolResult: ${problem}.`);
  const checked = result as Record<string, unknown>;
  if (call.outputSchema) {
    const structured = checked.structuredContent;
    if (structured === undefined && checked.isError !== true) {
      throw new sdk.McpError(sdk.ErrorCode.InvalidRequest, `Tool ${call.toolName} has an output schema but did not return structured content`);
    }
    if (structured !== undefined) {
      const verdict = schemas.getValidator(call.outputSchema as Parameters<CompiledSchemaCache['getValidator']>[0])(structured);
      if (!verdict.valid) throw new sdk.McpError(sdk.ErrorCode.InvalidParams, `Structured content does not match the tool's output schema: ${verdict.errorMessage}`);
    }
  }
  return checked;
}

/** What keeps `result` from being a `CallToolResult`, or undefined when nothing does. */
function shapeProblem(result: unknown): string | undefined {
  if (!isObject(result)) return 'not an object';
  if (result.isError !== undefined && typeof result.isError !== 'boolean') return '`isError` is not a boolean';
  if (result.structuredContent !== undefined && !isObject(result.structuredContent)) return '`structuredContent` is not an object';
  const content = result.content;
  if (content === undefined) return undefined;
  if (!Array.isArray(content)) return '`content` is not an array';
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i];
    if (!isObject(block) || typeof block.type !== 'string') return `content[${i}] has no type`;
    const fields = BLOCK_FIELDS[block.type];
    if (!fields) return `content[${i}] is of unknown type "${block.type}"`;
    for (const field of fields) if (typeof block[field] !== 'string') return `content[${i}].${field} is not a string`;
    if (block.type === 'resource') {
      const resource = block.resource;
      if (!isObject(resource) || typeof resource.uri !== 'string' || (typeof resource.text !== 'string' && typeof resource.blob !== 'string')) {
        return `content[${i}].resource is not a text or blob resource`;
      }
    }
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
