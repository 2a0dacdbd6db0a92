import { storableTools } from './tool-declarations.util.js';

describe('storableTools', () => {
  it('drops credentials from MCP declarations and leaves other tools alone', () => {
    const fn = { type: 'function', name: 'f', parameters: {}, headers: 'not a secret field here' };
    const mcp = { type: 'mcp', server_label: 's', server_url: 'https://mcp', headers: { Authorization: 'Bearer t' }, authorization: 'tok', Headers: {} };
    expect(storableTools([fn, mcp])).toEqual([fn, { type: 'mcp', server_label: 's', server_url: 'https://mcp' }]);
    expect(mcp.headers).toEqual({ Authorization: 'Bearer t' });
  });

  it('hides query values of an MCP server_url (tokens travel there too)', () => {
    expect(storableTools([{ type: 'mcp', server_label: 's', server_url: 'https://mcp/x?token=abc' }])).toEqual([
      { type: 'mcp', server_label: 's', server_url: 'https://mcp/x?token=***' },
    ]);
  });

  it('stores nothing for a value that is not a list', () => {
    expect(storableTools(undefined)).toEqual([]);
  });
});
