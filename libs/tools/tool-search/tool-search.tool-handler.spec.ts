import { InvalidRequestError, type PublicItem } from '#tool-sdk/index.js';
import { ToolSearchToolHandler } from './tool-search.tool-handler.js';

const handler = new ToolSearchToolHandler();
const ctx = { modelNameFor: (name: string) => (name === 'tool_search' ? 'tool_search' : undefined), clientCallName: () => undefined };

describe('ToolSearchToolHandler', () => {
  it('is a client-owned type claiming both of its items', () => {
    expect(handler.type).toBe('tool_search');
    expect(handler.gatewayOwned).toBe(false);
    expect(handler.historyItemTypes).toEqual(['tool_search_call', 'tool_search_output']);
  });

  it('offers one search function, with the client own description and schema when it sends them', () => {
    const [plain] = handler.normalize(handler.validate({ type: 'tool_search', execution: 'client' }, 'tools[0]'));
    expect(plain.fn).toMatchObject({ type: 'function', name: 'tool_search', parameters: { type: 'object', required: ['query'] } });
    expect(plain.clientShape).toEqual({
      kind: 'tool_search_call',
      name: 'tool_search',
      relay: { kind: 'json' },
      idPrefix: 'tsc',
      omitName: true,
      leadingFields: { execution: 'client' },
    });
    const parameters = { type: 'object', properties: { paths: { type: 'array', items: { type: 'string' } } }, required: ['paths'] };
    const params = handler.validate({ type: 'tool_search', execution: 'client', description: 'Load tools by path.', parameters }, 'tools[0]');
    expect(handler.normalize(params)[0].fn).toEqual({ type: 'function', name: 'tool_search', description: 'Load tools by path.', parameters });
    expect(handler.publicDeclaration(params)).toEqual({ type: 'tool_search', execution: 'client', description: 'Load tools by path.', parameters });
  });

  it.each([
    [{ type: 'tool_search' }, 'tools[1].execution'],
    [{ type: 'tool_search', execution: 'server' }, 'tools[1].execution'],
    [{ type: 'tool_search', execution: 'client', description: 3 }, 'tools[1].description'],
    [{ type: 'tool_search', execution: 'client', parameters: { type: 'string' } }, 'tools[1].parameters.type'],
  ])('refuses %j naming %s', (decl, param) => {
    try {
      handler.validate(decl, 'tools[1]');
      throw new Error('expected a refusal');
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect((err as InvalidRequestError).param).toBe(param);
    }
  });

  it('replays a search as the function call the model made and an output naming what was loaded', () => {
    const call = { type: 'tool_search_call', id: 'tsc_1', call_id: 'call_1', execution: 'client', status: 'completed', arguments: { query: 'x' } } as PublicItem;
    expect(handler.toModelItems(call, ctx)).toEqual([{ type: 'function_call', call_id: 'call_1', name: 'tool_search', arguments: '{"query":"x"}' }]);
    const out = { type: 'tool_search_output', id: 'tso_1', call_id: 'call_1', execution: 'client', tools: [{ type: 'function', name: 'f', description: 'F.' }] } as PublicItem;
    const [item] = handler.toModelItems(out, ctx) as any[];
    expect(item).toMatchObject({ type: 'function_call_output', call_id: 'call_1' });
    expect(JSON.parse(item.output)).toEqual({ loaded_tools: [{ type: 'function', name: 'f', description: 'F.' }], note: 'These tools are loaded and can be called now.' });
    const empty = handler.toModelItems({ ...out, tools: [] } as PublicItem, ctx) as any[];
    expect(JSON.parse(empty[0].output).note).toBe('No tool matched this search.');
    expect(handler.historyDeclarations(out, 'input[0]')).toEqual([{ type: 'function', name: 'f', description: 'F.' }]);
    expect(handler.historyDeclarations(call, 'input[0]')).toEqual([]);
  });
});
