import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { validateGatewayConfig } from '#config/config.loader.js';
import { GATEWAY_CONFIG } from '#tool-sdk/index.js';
import { providerRequirements } from '../providers/search-provider.registry.js';
import { WebSearchService } from '../search/web-search.service.js';
import { WebSearchToolModule } from '../web-search-tool.module.js';
import { webSearchConfigSection } from './web-search.config-section.js';
import { WebSearchConfigError, parseWebSearchSettings } from './web-search-settings.js';

const parse = (raw: unknown) => parseWebSearchSettings(raw, providerRequirements());
const messageOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected an error');
};

describe('parseWebSearchSettings', () => {
  it('leaves web search unconfigured without a provider, with defaults for the limits', () => {
    expect(parse(undefined)).toEqual({
      provider: null,
      endpoint: null,
      maxConcurrentQueries: 4,
      timeoutMs: undefined,
      resultBudgetChars: 6000,
      maxQueriesPerCall: 5,
    });
  });

  it('defaults each hosted provider to its public endpoint', () => {
    expect(parse({ provider: 'brave', brave: { apiKey: 'b' } }).endpoint).toEqual({ baseUrl: 'https://api.search.brave.com', apiKey: 'b' });
    expect(parse({ provider: 'tavily', tavily: { apiKey: 't' } }).endpoint).toEqual({ baseUrl: 'https://api.tavily.com', apiKey: 't' });
    expect(parse({ provider: 'serper', serper: { apiKey: 's' } }).endpoint).toEqual({ baseUrl: 'https://google.serper.dev', apiKey: 's' });
    expect(parse({ provider: 'searxng', searxng: { baseUrl: 'http://127.0.0.1:8888/' }, maxConcurrentQueries: 2 })).toMatchObject({
      provider: 'searxng',
      endpoint: { baseUrl: 'http://127.0.0.1:8888' },
      maxConcurrentQueries: 2,
    });
  });

  it.each([
    [{ provider: 'bing' }, /webSearch\.provider: must be one of searxng, brave, tavily, serper \(got "bing"\)/],
    [{ provider: 'brave' }, /webSearch\.brave\.apiKey: is required for provider "brave"/],
    [{ provider: 'searxng' }, /webSearch\.searxng\.baseUrl: is required/],
    [{ provider: 'searxng', searxng: { baseUrl: 'ftp://x' } }, /webSearch\.searxng\.baseUrl: must be an http\(s\) URL/],
    [{ provider: 'tavily', tavily: { apiKey: 't', apiKeyInBody: 'yes' } }, /webSearch\.tavily\.apiKeyInBody: must be true or false \(got "yes"\)/],
    [{ serper: { apiKey: 's', key: 'x' } }, /unknown config key "webSearch\.serper\.key"/],
    [{ maxConcurrentQueries: 0 }, /webSearch\.maxConcurrentQueries: must be an integer from 1 to 256 \(got 0\)/],
    [{ timeoutMs: 'fast' }, /webSearch\.timeoutMs: must be an integer/],
    [{ resultBudgetChars: 10 }, /webSearch\.resultBudgetChars: must be an integer from 500/],
    [{ provder: 'brave' }, /unknown config key "webSearch\.provder" \(did you mean "webSearch\.provider"\?\)/],
    ['brave', /webSearch must be an object/],
  ])('rejects %j', (raw, message) => {
    expect(() => parse(raw)).toThrow(WebSearchConfigError);
    expect(() => parse(raw)).toThrow(message);
  });

  it('says every wrong value in one pass, one line each, never a key', () => {
    const message = messageOf(() =>
      parse({ provider: 'brave', brave: { apiKey: '', baseUrl: 'nowhere' }, searxng: 'x', maxQueriesPerCall: 0, timeoutMs: 'fast', resultBudgetChars: 10 }),
    );
    const [heading, ...lines] = message.split('\n');
    expect(heading).toBe('Invalid configuration:');
    expect(lines.sort()).toEqual(
      [
        '  webSearch.timeoutMs: must be an integer from 100 to 600000 (got "fast")',
        '  webSearch.resultBudgetChars: must be an integer from 500 to 1000000 (got 10)',
        '  webSearch.maxQueriesPerCall: must be an integer from 1 to 20 (got 0)',
        '  webSearch.searxng: must be an object like { "baseUrl": "...", "apiKey": "..." } (got "x")',
        '  webSearch.brave.baseUrl: must be an http(s) URL (got "nowhere")',
        '  webSearch.brave.apiKey: must be a non-empty string',
      ].sort(),
    );
  });

  it("blames the variable that gave a wrong value, beside the file's problems", () => {
    const message = messageOf(() =>
      validateGatewayConfig({ webSearch: { provider: 'bing', maxConcurentQueries: 2, maxQueriesPerCall: 50 } }, { sections: [{ ...webSearchConfigSection }] }),
    );
    expect(message.split('\n')).toEqual([
      'Invalid configuration:',
      '  unknown config key "webSearch.maxConcurentQueries" (did you mean "webSearch.maxConcurrentQueries"?)',
      '  webSearch.maxQueriesPerCall: must be an integer from 1 to 20 (got 50)',
      '  webSearch.provider (WEB_SEARCH_PROVIDER): must be one of searxng, brave, tavily, serper (got "bing")',
    ]);
  });
});

describe('WebSearchToolModule start-up', () => {
  async function boot(webSearch: Record<string, unknown>) {
    @Global()
    @Module({ providers: [{ provide: GATEWAY_CONFIG, useValue: Object.assign(validateGatewayConfig({}), { webSearch }) }], exports: [GATEWAY_CONFIG] })
    class ConfigModule {}
    return Test.createTestingModule({ imports: [ConfigModule, WebSearchToolModule] }).compile();
  }

  it('refuses to start with a bad webSearch section, naming the setting', async () => {
    await expect(boot({ provider: 'tavily' })).rejects.toThrow(/webSearch\.tavily\.apiKey/);
  });

  it('starts with the configured provider', async () => {
    const moduleRef = await boot({ provider: 'brave', brave: { apiKey: 'b' } });
    expect(moduleRef.get(WebSearchService).provider?.name).toBe('brave');
    await moduleRef.close();
  });
});
