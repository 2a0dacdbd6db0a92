import { InvalidRequestError, type JsonObject } from '#tool-sdk/index.js';
import { NamespaceToolHandler, namespaceMemberName } from './namespace.tool-handler.js';

const handler = new NamespaceToolHandler();
const fn = (name: string, extra: JsonObject = {}): JsonObject => ({ type: 'function', name, ...extra });

function paramOf(run: () => unknown): string | null {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequestError);
    return (err as InvalidRequestError).param;
  }
  throw new Error('expected an InvalidRequestError');
}

describe('NamespaceToolHandler', () => {
  it('is client-owned', () => {
    expect(handler.type).toBe('namespace');
    expect(handler.gatewayOwned).toBe(false);
  });

  it('validates the group and each member, naming the field', () => {
    const v = (decl: JsonObject) => () => handler.validate(decl, 'tools[2]');
    expect(paramOf(v({ type: 'namespace', tools: [fn('a')] }))).toBe('tools[2].name');
    expect(paramOf(v({ type: 'namespace', name: 'ns' }))).toBe('tools[2].tools');
    expect(paramOf(v({ type: 'namespace', name: 'ns', tools: [] }))).toBe('tools[2].tools');
    expect(paramOf(v({ type: 'namespace', name: 'ns', tools: [fn('a'), 'b'] }))).toBe('tools[2].tools[1]');
    expect(paramOf(v({ type: 'namespace', name: 'ns', tools: [{ type: 'mcp', name: 'x' }] }))).toBe('tools[2].tools[0].type');
    expect(paramOf(v({ type: 'namespace', name: 'ns', tools: [fn('a b')] }))).toBe('tools[2].tools[0].name');
    expect(paramOf(v({ type: 'namespace', name: 'ns', tools: [{ type: 'custom', name: 'c', format: { type: 'grammar' } }] }))).toBe('tools[2].tools[0].format.syntax');
    expect(paramOf(v({ type: 'namespace', name: 'ns', tools: [fn('a'), { type: 'custom', name: 'a' }] }))).toBe('tools[2].tools[1].name');
  });

  it('flattens members to <namespace>__<member> and remembers how to restore them', () => {
    const params = handler.validate(
      {
        type: 'namespace',
        name: 'shell',
        description: 'Local shell',
        tools: [fn('run', { description: 'Run a command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } }), { type: 'custom', name: 'patch' }],
      },
      'tools[0]',
    );
    const [run, patch] = handler.normalize(params);

    expect(run.fn).toEqual({
      type: 'function',
      name: 'shell__run',
      description: '[shell: Local shell] Run a command',
      parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
      strict: null,
    });
    expect(run.toolName).toBe('run');
    expect(run.clientShape).toEqual({ kind: 'function_call', name: 'run', scope: 'shell', trailingFields: { namespace: 'shell' } });

    expect(patch.fn.name).toBe('shell__patch');
    expect(patch.fn.description?.startsWith('[shell: Local shell] ')).toBe(true);
    expect(patch.fn.parameters).toMatchObject({ required: ['input'] });
    expect(patch.clientShape).toEqual({
      kind: 'custom_tool_call',
      name: 'patch',
      relay: { kind: 'string-field', field: 'input' },
      idPrefix: 'ctc',
      scope: 'shell',
      trailingFields: { namespace: 'shell' },
    });
  });

  it('names members the same way in every request, within 64 characters', () => {
    const long = 'n'.repeat(60);
    const params = handler.validate({ type: 'namespace', name: long, tools: [fn('member')] }, 'tools[0]');
    const first = handler.normalize(params)[0].fn.name;
    expect(first.length).toBeLessThanOrEqual(64);
    expect(first).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(handler.normalize(params)[0].fn.name).toBe(first);
    expect(namespaceMemberName(long, 'member')).toBe(first);
    // Namespaces carrying characters a function name cannot hold are sanitized.
    expect(namespaceMemberName('mcp.git', 'log')).toBe('mcp_git__log');
  });

  it('labels members without a description by the namespace alone', () => {
    const params = handler.validate({ type: 'namespace', name: 'ns', tools: [fn('a')] }, 'tools[0]');
    expect(handler.normalize(params)[0].fn.description).toBe('[ns] ');
  });
});
