import { InvalidRequestError } from '#tool-sdk/index.js';
import { CustomToolHandler } from './custom.tool-handler.js';

const handler = new CustomToolHandler();

function paramOf(run: () => unknown): string | null {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequestError);
    return (err as InvalidRequestError).param;
  }
  throw new Error('expected an InvalidRequestError');
}

describe('CustomToolHandler', () => {
  it('is client-owned', () => {
    expect(handler.gatewayOwned).toBe(false);
  });

  it('defaults to a text format', () => {
    expect(handler.validate({ type: 'custom', name: 'apply_patch' }, 'tools[0]').format).toEqual({ type: 'text' });
    expect(handler.validate({ type: 'custom', name: 'apply_patch', format: { type: 'text' } }, 'tools[0]').format).toEqual({ type: 'text' });
  });

  it('validates grammar formats and names the bad field', () => {
    expect(paramOf(() => handler.validate({ type: 'custom' }, 'tools[1]'))).toBe('tools[1].name');
    expect(paramOf(() => handler.validate({ type: 'custom', name: 'c', format: 'text' }, 'tools[1]'))).toBe('tools[1].format');
    expect(paramOf(() => handler.validate({ type: 'custom', name: 'c', format: { type: 'json' } }, 'tools[1]'))).toBe('tools[1].format.type');
    expect(paramOf(() => handler.validate({ type: 'custom', name: 'c', format: { type: 'grammar', syntax: 'ebnf', definition: 'x' } }, 'tools[1]'))).toBe('tools[1].format.syntax');
    expect(paramOf(() => handler.validate({ type: 'custom', name: 'c', format: { type: 'grammar', syntax: 'lark', definition: '' } }, 'tools[1]'))).toBe(
      'tools[1].format.definition',
    );
  });

  it('offers the tool as a strict function taking the freeform input as one string', () => {
    const params = handler.validate({ type: 'custom', name: 'apply_patch', description: 'Apply a patch.' }, 'tools[0]');
    const [tool] = handler.normalize(params);
    expect(tool.clientShape).toEqual({ kind: 'custom_tool_call', name: 'apply_patch', relay: { kind: 'string-field', field: 'input' }, idPrefix: 'ctc' });
    expect(tool.toolName).toBe('apply_patch');
    expect(tool.fn).toMatchObject({
      type: 'function',
      name: 'apply_patch',
      strict: true,
      parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'], additionalProperties: false },
    });
    expect(tool.fn.description).toMatch(/^Apply a patch\./);
  });

  it('tells the model the grammar it cannot be constrained to', () => {
    const lark = handler.validate({ type: 'custom', name: 'sql', format: { type: 'grammar', syntax: 'lark', definition: 'start: "SELECT" NAME' } }, 'tools[0]');
    expect(handler.normalize(lark)[0].fn.description).toContain('Lark grammar:\nstart: "SELECT" NAME');
    const regex = handler.validate({ type: 'custom', name: 'zip', format: { type: 'grammar', syntax: 'regex', definition: '^\\d{5}$' } }, 'tools[0]');
    expect(handler.normalize(regex)[0].fn.description).toContain('regular expression:\n^\\d{5}$');
  });

  it('echoes the effective declaration', () => {
    const params = handler.validate({ type: 'custom', name: 'c', extra: 1 }, 'tools[0]');
    expect(handler.publicDeclaration(params)).toEqual({ type: 'custom', name: 'c', description: null, format: { type: 'text' } });
  });
});
