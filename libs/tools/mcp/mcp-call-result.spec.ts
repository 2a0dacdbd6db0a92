import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { checkedCallResult } from './mcp-call-result.js';
import { CompiledSchemaCache } from './mcp-schema-validator.js';
import { loadMcpSdk } from './mcp-sdk.js';

const sdk = { McpError, ErrorCode };
const answer = (result: unknown) => ({ id: 'switchyard-1', result });

beforeAll(() => loadMcpSdk());

describe('checkedCallResult: a tools/call answer held to what the SDK client holds it to', () => {
  const schemas = new CompiledSchemaCache();
  const call = { toolName: 'add' };

  // Shapes the SDK's CallToolResultSchema accepts or refuses, each checked against the schema itself.
  const samples: Array<[string, unknown]> = [
    ['text', { content: [{ type: 'text', text: 'hi' }] }],
    ['no content (defaults to none)', {}],
    ['structured and isError', { content: [], structuredContent: { sum: 1 }, isError: false }],
    [
      'image and audio',
      {
        content: [
          { type: 'image', data: 'aGk=', mimeType: 'image/png' },
          { type: 'audio', data: 'aGk=', mimeType: 'audio/wav' },
        ],
      },
    ],
    ['resource link', { content: [{ type: 'resource_link', uri: 'file:///a', name: 'a' }] }],
    [
      'text and blob resources',
      {
        content: [
          { type: 'resource', resource: { uri: 'file:///a', text: 'a' } },
          { type: 'resource', resource: { uri: 'file:///b', blob: 'YQ==' } },
        ],
      },
    ],
    ['extra fields kept', { content: [{ type: 'text', text: 'x', annotations: { audience: ['user'] } }], _meta: { at: 1 } }],
    ['not an object', 'text'],
    ['an array', [{ type: 'text', text: 'x' }]],
    ['content not an array', { content: 'x' }],
    ['a block without type', { content: [{ text: 'x' }] }],
    ['a text block without text', { content: [{ type: 'text' }] }],
    ['a text block with a number', { content: [{ type: 'text', text: 3 }] }],
    ['an unknown block type', { content: [{ type: 'video', url: 'x' }] }],
    ['an image without mimeType', { content: [{ type: 'image', data: 'aGk=' }] }],
    ['a resource without uri', { content: [{ type: 'resource', resource: { text: 'a' } }] }],
    ['a resource with neither text nor blob', { content: [{ type: 'resource', resource: { uri: 'file:///a' } }] }],
    ['structuredContent not an object', { content: [], structuredContent: [1] }],
    ['isError not a boolean', { content: [], isError: 'yes' }],
  ];

  it.each(samples)('%s: accepted exactly when the SDK schema accepts it', (_name, result) => {
    const sdkAccepts = CallToolResultSchema.safeParse(result).success;
    const check = () => checkedCallResult(answer(result), call, schemas, sdk);
    if (sdkAccepts) expect(check()).toBe(result);
    else expect(check).toThrow(/not a CallToolResult/);
  });

  it('a JSON-RPC error is the SDK error with the server code, message and data', () => {
    let thrown: unknown;
    try {
      checkedCallResult({ id: 'switchyard-1', error: { code: -32602, message: 'Unknown tool: nope', data: { hint: 1 } } }, call, schemas, sdk);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(McpError);
    expect(thrown).toMatchObject({ code: -32602, data: { hint: 1 }, message: expect.stringContaining('Unknown tool: nope') });
  });

  describe('a tool with an output schema', () => {
    const withSchema = { toolName: 'add', outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] } };

    it('passes structured content the schema accepts', () => {
      const result = { content: [{ type: 'text', text: '3' }], structuredContent: { sum: 3 } };
      expect(checkedCallResult(answer(result), withSchema, schemas, sdk)).toBe(result);
    });

    it('refuses structured content the schema refuses, as the SDK does (InvalidParams)', () => {
      expect(() => checkedCallResult(answer({ content: [], structuredContent: { sum: 'three' } }), withSchema, schemas, sdk)).toThrow(
        expect.objectContaining({ code: ErrorCode.InvalidParams, message: expect.stringContaining("does not match the tool's output schema") }),
      );
    });

    it('refuses a result without structured content unless it reports an error (InvalidRequest)', () => {
      expect(() => checkedCallResult(answer({ content: [{ type: 'text', text: '3' }] }), withSchema, schemas, sdk)).toThrow(
        expect.objectContaining({ code: ErrorCode.InvalidRequest, message: expect.stringContaining('did not return structured content') }),
      );
      const failed = { content: [{ type: 'text', text: 'broken' }], isError: true };
      expect(checkedCallResult(answer(failed), withSchema, schemas, sdk)).toBe(failed);
    });

    it('compiles the schema once for the connection', () => {
      const own = new CompiledSchemaCache();
      for (let i = 0; i < 5; i++) checkedCallResult(answer({ content: [], structuredContent: { sum: i } }), withSchema, own, sdk);
      expect(own.size).toBe(1);
    });
  });
});
