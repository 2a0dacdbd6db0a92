import { InvalidRequestError, type JsonObject } from '#tool-sdk/index.js';
import { parseWebSearchSettings } from './config/web-search-settings.js';
import { providerRequirements } from './providers/search-provider.registry.js';
import { WebSearchService } from './search/web-search.service.js';
import { WebSearchToolHandler } from './web-search.tool-handler.js';

const handler = new WebSearchToolHandler();

function rejects(decl: JsonObject): InvalidRequestError {
  try {
    handler.validate(decl, 'tools[2]');
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequestError);
    return err as InvalidRequestError;
  }
  throw new Error('expected the declaration to be rejected');
}

describe('WebSearchToolHandler', () => {
  it('claims web_search and its preview and dated wire tags', () => {
    expect(handler.type).toBe('web_search');
    expect(handler.aliases).toEqual(['web_search_preview', 'web_search_preview_2025_03_11', 'web_search_2025_08_26']);
    expect(handler.gatewayOwned).toBe(true);
    expect(handler.historyItemTypes).toEqual(['web_search_call']);
  });

  it('accepts a bare declaration with medium context', () => {
    expect(handler.validate({ type: 'web_search_preview' }, 'tools[0]')).toEqual({ contextSize: 'medium' });
    expect(handler.validate({ type: 'web_search', search_context_size: null, user_location: null, filters: null }, 'tools[0]')).toEqual({ contextSize: 'medium' });
  });

  it('validates and normalizes every field', () => {
    const params = handler.validate(
      {
        type: 'web_search',
        search_context_size: 'high',
        user_location: { type: 'approximate', country: 'gb', city: 'London', region: 'England', timezone: 'Europe/London' },
        filters: { allowed_domains: ['https://BBC.co.uk/news', 'gov.uk', 'gov.uk:443'], blocked_domains: ['Ads.BBC.co.uk', 'https://ads.bbc.co.uk/'] },
      },
      'tools[0]',
    );
    expect(params).toEqual({
      contextSize: 'high',
      userLocation: { country: 'GB', city: 'London', region: 'England', timezone: 'Europe/London' },
      allowedDomains: ['bbc.co.uk', 'gov.uk'],
      blockedDomains: ['ads.bbc.co.uk'],
    });
  });

  it.each([
    [{ search_context_size: 'huge' }, 'tools[2].search_context_size'],
    [{ search_context_size: 3 }, 'tools[2].search_context_size'],
    [{ user_location: 'Paris' }, 'tools[2].user_location'],
    [{ user_location: { type: 'exact' } }, 'tools[2].user_location.type'],
    [{ user_location: { country: 'France' } }, 'tools[2].user_location.country'],
    [{ user_location: { city: 7 } }, 'tools[2].user_location.city'],
    [{ user_location: { timezone: 'Mars/Olympus' } }, 'tools[2].user_location.timezone'],
    [{ filters: [] }, 'tools[2].filters'],
    [{ filters: { allowed_domains: 'example.com' } }, 'tools[2].filters.allowed_domains'],
    [{ filters: { allowed_domains: ['example.com', 'not a domain'] } }, 'tools[2].filters.allowed_domains[1]'],
    [{ filters: { allowed_domains: Array.from({ length: 101 }, (_, i) => `d${i}.com`) } }, 'tools[2].filters.allowed_domains'],
    [{ filters: { blocked_domains: 'spam.com' } }, 'tools[2].filters.blocked_domains'],
    [{ filters: { blocked_domains: ['spam.com', 'not a domain'] } }, 'tools[2].filters.blocked_domains[1]'],
    [{ filters: { blocked_domains: Array.from({ length: 101 }, (_, i) => `d${i}.com`) } }, 'tools[2].filters.blocked_domains'],
  ])('rejects %j naming %s', (fields, param) => {
    const err = rejects({ type: 'web_search', ...fields });
    expect(err.param).toBe(param);
    expect(err.message).toContain(param);
    expect(err).toBeInstanceOf(InvalidRequestError);
  });

  it('offers the model one function taking a query or several', () => {
    const [tool] = handler.normalize({ contextSize: 'low' });
    expect(tool.fn.name).toBe('web_search');
    expect(tool.toolName).toBe('web_search');
    expect(tool.hidden).toBe(false);
    expect(tool.executionParams).toEqual({ contextSize: 'low' });
    expect(tool.fn.parameters).toMatchObject({
      type: 'object',
      properties: { query: { type: 'string' }, queries: { type: 'array', items: { type: 'string' } } },
      required: ['query'],
    });
  });

  it('keeps the function from the model when no search can run: no provider, or external_web_access false', () => {
    const settings = parseWebSearchSettings(undefined, providerRequirements());
    const unconfigured = new WebSearchToolHandler(new WebSearchService(settings));
    expect(unconfigured.normalize({ contextSize: 'medium' })[0].hidden).toBe(true);
    const configured = new WebSearchToolHandler(
      new WebSearchService(parseWebSearchSettings({ provider: 'searxng', searxng: { baseUrl: 'http://127.0.0.1:9' } }, providerRequirements())),
    );
    expect(configured.normalize({ contextSize: 'medium' })[0].hidden).toBe(false);
    const cached = configured.validate({ type: 'web_search', external_web_access: false }, 'tools[0]');
    expect(cached).toEqual({ contextSize: 'medium', externalWebAccess: false });
    expect(configured.normalize(cached)[0].hidden).toBe(true);
    expect(configured.publicDeclaration(cached, { type: 'web_search' })).toMatchObject({ external_web_access: false });
    expect(rejects({ type: 'web_search', external_web_access: 'no' }).param).toBe('tools[2].external_web_access');
  });

  it('echoes the declaration with defaults, dated tags as their family', () => {
    const params = handler.validate({ type: 'web_search_2025_08_26', user_location: { country: 'US' } }, 'tools[0]');
    expect(handler.publicDeclaration(params, { type: 'web_search_2025_08_26' })).toEqual({
      type: 'web_search',
      search_context_size: 'medium',
      user_location: { type: 'approximate', country: 'US', region: null, city: null, timezone: null },
    });
    expect(handler.publicDeclaration({ contextSize: 'low', allowedDomains: ['a.com'] }, { type: 'web_search_preview_2025_03_11' })).toEqual({
      type: 'web_search_preview',
      search_context_size: 'low',
      user_location: null,
      filters: { allowed_domains: ['a.com'] },
    });
    expect(handler.publicDeclaration({ contextSize: 'medium', blockedDomains: ['b.com'] }, { type: 'web_search' })).toMatchObject({ filters: { blocked_domains: ['b.com'] } });
  });

  it('turns a web_search_call from history into a call and an output without results', () => {
    const ctx = { modelNameFor: (name: string) => (name === 'web_search' ? 'web_search' : undefined), clientCallName: () => undefined };
    const items = handler.toModelItems(
      {
        type: 'web_search_call',
        id: 'ws_1',
        status: 'completed',
        action: { type: 'search', query: 'a', queries: ['a', 'b'], sources: [{ type: 'url', url: 'https://x.example/' }] },
      },
      ctx,
    );
    expect(items).toEqual([
      { type: 'function_call', call_id: 'ws_1', name: 'web_search', arguments: JSON.stringify({ query: 'a', queries: ['a', 'b'] }) },
      {
        type: 'function_call_output',
        call_id: 'ws_1',
        output: JSON.stringify({ note: 'The results of this earlier search were not kept; search again if you need them.', sources: ['https://x.example/'] }),
      },
    ]);
    const failed = handler.toModelItems(
      { type: 'web_search_call', id: 'ws_2', status: 'failed', action: { type: 'search', query: 'c' } },
      { modelNameFor: () => undefined, clientCallName: () => undefined },
    );
    expect(failed[0]).toMatchObject({ name: 'web_search', arguments: '{"query":"c"}' });
    expect(JSON.parse(failed[1].type === 'function_call_output' ? (failed[1].output as string) : '')).toEqual({ error: { code: 'search_failed', message: 'This search failed.' } });
  });
});
