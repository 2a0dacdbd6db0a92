import { fileSearchConfigSection, parseFileSearchSettings } from '#tools/file-search/config/file-search-settings.js';
import { FileSearchToolHandler } from '#tools/file-search/file-search.tool-handler.js';
import { validateGatewayConfig } from '#config/config.loader.js';
import { authConfigSection } from '#state/auth/auth.config-section.js';
import { storageConfigSection } from '#storage/config/storage.config-section.js';
import { memoryDriverLimits, redactUrl, startupSummary, storageSummary, toolSummary } from './startup-summary.js';

const handler = (type: string, gatewayOwned: boolean) => ({ type, gatewayOwned }) as any;

function explorerWith(types: Array<[string, boolean, boolean]>) {
  return {
    types: () => types.map(([t]) => t),
    handlerForType: (t: string) => types.filter(([x]) => x === t).map(([x, g]) => handler(x, g))[0],
    executorForType: (t: string) => (types.some(([x, , e]) => x === t && e) ? ({} as any) : undefined),
  };
}

describe('start-up summary', () => {
  it("states the memory driver's limits: where batches and file search live, or that they are unavailable without better-sqlite3", () => {
    const memory = storageSummary(validateGatewayConfig({ storage: { driver: 'memory' } }, { sections: [storageConfigSection] }));
    // This checkout has better-sqlite3 installed.
    expect(memory).toMatchObject({ driver: 'memory', limits: memoryDriverLimits(true) });
    expect(memoryDriverLimits(true)).toMatch(/in-memory SQLite database \(better-sqlite3\)/);
    expect(memoryDriverLimits(false)).toMatch(/^batches and file search unavailable: they need the package better-sqlite3.*503 driver_missing$/);
    const sqlite = storageSummary(validateGatewayConfig({ storage: { driver: 'sqlite', sqlitePath: ':memory:' } }, { sections: [storageConfigSection] }));
    expect(sqlite).not.toHaveProperty('limits');
  });

  it('redacts credentials from URLs', () => {
    expect(redactUrl('postgres://app:hunter2@db:5432/x')).toBe('postgres://app:***@db:5432/x');
    expect(redactUrl('http://h/v1?api_key=abc&model=q')).toBe('http://h/v1?api_key=***&model=***');
    expect(redactUrl('not a url')).toBe('(unparseable URL)');
  });

  it("says which tool types run and why the others do not, in each module's own words", () => {
    const described = (type: string, runs: boolean, detail: string) => ({ type, gatewayOwned: true, describe: () => ({ runs, detail }) }) as any;
    const explorer = {
      types: () => ['function', 'mcp', 'web_search', 'file_search', 'probe'],
      handlerForType: (t: string) =>
        ({
          function: handler('function', false),
          mcp: described('mcp', true, 'runs in the gateway: 1 operator server(s)'),
          web_search: described('web_search', false, 'no search provider configured (set WEB_SEARCH_PROVIDER)'),
          file_search: handler('file_search', true),
          probe: handler('probe', true),
        })[t],
      executorForType: (t: string) => (t === 'file_search' ? undefined : ({} as any)),
    };
    const summary = toolSummary(validateGatewayConfig({}), explorer);
    expect(summary.active.function).toMatch(/client-owned/);
    expect(summary.active.mcp).toBe('runs in the gateway: 1 operator server(s)');
    expect(summary.inactive.web_search).toMatch(/WEB_SEARCH_PROVIDER/);
    expect(summary.inactive.file_search).toMatch(/no executor/);
    // A module that says nothing of itself runs in the gateway.
    expect(summary.active.probe).toBe('runs in the gateway');
    // Types the configuration refuses without a module: named, with what a declaration gets.
    expect(summary.inactive.code_interpreter).toMatch(/refused with a 400/);
    expect(summary.inactive.custom).toMatch(/refused with a 400/);
    const relaxed = toolSummary(validateGatewayConfig({ tools: { refuseUnhandledTypes: [] } }), explorer);
    expect(relaxed.inactive.code_interpreter).toBeUndefined();
  });

  it('lists an alias (web_search_preview) as its type runs, not as refused', () => {
    const webSearch = (runs: boolean) => ({
      type: 'web_search',
      gatewayOwned: true,
      aliases: ['web_search_preview', 'web_search_preview_2025_03_11'],
      describe: () => ({ runs, detail: runs ? 'runs in the gateway: provider searxng' : 'no search provider configured (set WEB_SEARCH_PROVIDER)' }),
    });
    const explorerOf = (runs: boolean) => ({ types: () => ['web_search'], handlerForType: () => webSearch(runs) as any, executorForType: () => ({}) as any });
    const running = toolSummary(validateGatewayConfig({}), explorerOf(true));
    expect(running.active.web_search_preview).toBe('an alias of web_search: runs in the gateway: provider searxng');
    expect(running.active.web_search_preview_2025_03_11).toMatch(/^an alias of web_search/);
    expect(running.inactive.web_search_preview).toBeUndefined();
    const idle = toolSummary(validateGatewayConfig({}), explorerOf(false));
    expect(idle.inactive.web_search_preview).toBe('an alias of web_search: no search provider configured (set WEB_SEARCH_PROVIDER)');
    expect(idle.active.web_search_preview).toBeUndefined();
  });

  it("says whether file search is hybrid, in the file-search module's own words", () => {
    const withHandler = (h: FileSearchToolHandler) => ({ types: () => ['file_search'], handlerForType: () => h, executorForType: () => ({}) as any });
    const lexical = new FileSearchToolHandler(parseFileSearchSettings(validateGatewayConfig({})));
    expect(toolSummary(validateGatewayConfig({}), withHandler(lexical)).active.file_search).toMatch(/lexical retrieval \(BM25\) only/);
    const hybrid = new FileSearchToolHandler(
      parseFileSearchSettings(validateGatewayConfig({ fileSearch: { embeddings: { model: 'bge-m3' } } }, { sections: [fileSearchConfigSection] })),
    );
    expect(toolSummary(validateGatewayConfig({}), withHandler(hybrid)).active.file_search).toMatch(/hybrid retrieval .*bge-m3/);
  });

  it('never prints the upstream key, the inbound keys or the database password', () => {
    const config = validateGatewayConfig(
      {
        upstream: { baseUrl: 'http://user:pw-1@vllm:8000/v1', apiKey: 'sk-upstream-9' },
        auth: { apiKeys: ['sk-in-1', 'sk-in-2'] },
        storage: { driver: 'postgres', postgresUrl: 'postgres://app:pw-2@db/x' },
      },
      { sections: [storageConfigSection, authConfigSection] },
    );
    const text = JSON.stringify(startupSummary(config, explorerWith([]), 'http://0.0.0.0:8080'));
    for (const secret of ['pw-1', 'sk-upstream-9', 'sk-in-1', 'sk-in-2', 'pw-2']) expect(text).not.toContain(secret);
    expect(text).toContain('2 API key(s)');
    expect(text).toContain('"api_key":"set"');
    expect(text).toContain('postgres://app:***@db/x');
  });

  it('lists every upstream replica, each redacted', () => {
    const config = validateGatewayConfig({ upstream: { baseUrl: 'http://a:8000/v1, http://u:pw-3@b:8000/v1' } });
    const summary = startupSummary(config, explorerWith([]), 'http://0.0.0.0:8080') as { upstream: { replicas?: string[] } };
    expect(summary.upstream.replicas).toEqual(['http://a:8000/v1', 'http://u:***@b:8000/v1']);
  });
});
