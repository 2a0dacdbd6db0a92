import { InvalidRequestError } from '#tool-sdk/index.js';
import { FunctionToolHandler } from './function.tool-handler.js';

const handler = new FunctionToolHandler();

function paramOf(run: () => unknown): string | null {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequestError);
    return (err as InvalidRequestError).param;
  }
  throw new Error('expected an InvalidRequestError');
}

describe('FunctionToolHandler', () => {
  it('is client-owned', () => {
    expect(handler.type).toBe('function');
    expect(handler.gatewayOwned).toBe(false);
  });

  it('validates each field and names it', () => {
    expect(paramOf(() => handler.validate({ type: 'function' }, 'tools[3]'))).toBe('tools[3].name');
    expect(paramOf(() => handler.validate({ type: 'function', name: 'a'.repeat(65) }, 'tools[0]'))).toBe('tools[0].name');
    expect(paramOf(() => handler.validate({ type: 'function', name: 'dotted.name' }, 'tools[0]'))).toBe('tools[0].name');
    expect(paramOf(() => handler.validate({ type: 'function', name: 'f', description: 3 }, 'tools[0]'))).toBe('tools[0].description');
    expect(paramOf(() => handler.validate({ type: 'function', name: 'f', strict: 'yes' }, 'tools[0]'))).toBe('tools[0].strict');
    expect(paramOf(() => handler.validate({ type: 'function', name: 'f', parameters: [] }, 'tools[0]'))).toBe('tools[0].parameters');
    expect(paramOf(() => handler.validate({ type: 'function', name: 'f', parameters: { type: 'array' } }, 'tools[0]'))).toBe('tools[0].parameters.type');
  });

  it('defaults to a schema without parameters', () => {
    expect(handler.validate({ type: 'function', name: 'f' }, 'tools[0]')).toEqual({
      name: 'f',
      description: null,
      parameters: { type: 'object', properties: {} },
      strict: null,
    });
  });

  it('passes the declaration to the model unchanged and hands calls back under the same name', () => {
    const parameters = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    const params = handler.validate({ type: 'function', name: 'read_file', description: 'Read a file', parameters, strict: true }, 'tools[0]');
    expect(handler.normalize(params)).toEqual([
      {
        fn: { type: 'function', name: 'read_file', description: 'Read a file', parameters, strict: true },
        toolName: 'read_file',
        clientShape: { kind: 'function_call', name: 'read_file' },
      },
    ]);
  });

  it('echoes only the fields it understands', () => {
    const params = handler.validate({ type: 'function', name: 'f', extra: 'dropped' }, 'tools[0]');
    expect(handler.publicDeclaration(params)).toEqual({ type: 'function', name: 'f', description: null, parameters: { type: 'object', properties: {} }, strict: null });
  });
});
