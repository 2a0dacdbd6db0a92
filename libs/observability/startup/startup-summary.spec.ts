import { validateGatewayConfig } from '#config/config.loader.js';
import { authConfigSection } from '#state/auth/auth.config-section.js';
import { storageConfigSection } from '#storage/config/storage.config-section.js';
import { redactUrl, startupSummary, toolSummary } from './startup-summary.js';

const handler = (type: string, gatewayOwned: boolean) => ({ type, gatewayOwned }) as any;

function explorerWith(types: Array<[string, boolean, boolean]>) {
  return {
    types: () => types.map(([t]) => t),
    handlerForType: (t: string) => types.filter(([x]) => x === t).map(([x, g]) => handler(x, g))[0],
    executorForType: (t: string) => (types.some(([x, , e]) => x === t && e) ? ({} as any) : undefined),
  };
}

describe('start-up summary', () => {
  it('redacts credentials from URLs', () => {
    expect(redactUrl('postgres://app:hunter2@db:5432/x')).toBe('postgres://app:***@db:5432/x');
    expect(redactUrl('http://h/v1?api_key=abc&model=q')).toBe('http://h/v1?api_key=***&model=***');
    expect(redactUrl('not a url')).toBe('(unparseable URL)');
  });

  it('says which tool types run and why the others do not', () => {
    const config = Object.assign(validateGatewayConfig({}), { mcp: { servers: [{ label: 'git', transport: 'stdio', command: 'x' }], allowedHosts: ['a', 'b'] } });
    const summary = toolSummary(
      config,
      explorerWith([
        ['function', false, false],
        ['mcp', true, true],
        ['web_search', true, true],
        ['file_search', true, false],
      ]),
    );
    expect(summary.active.function).toMatch(/client-owned/);
    expect(summary.active.mcp).toMatch(/1 operator server\(s\).*2 host\(s\)/);
    expect(summary.inactive.web_search).toMatch(/WEB_SEARCH_PROVIDER/);
    expect(summary.inactive.file_search).toMatch(/no executor/);
    // Not loaded at all: named too, with that reason.
    expect(summary.inactive.code_interpreter).toMatch(/not loaded/);
    expect(summary.inactive.custom).toMatch(/not loaded/);

    const withSearch = toolSummary(Object.assign(validateGatewayConfig({}), { webSearch: { provider: 'searxng' } }), explorerWith([['web_search', true, true]]));
    expect(withSearch.active.web_search).toBe('runs in the gateway');

    const lexical = toolSummary(validateGatewayConfig({}), explorerWith([['file_search', true, true]]));
    expect(lexical.active.file_search).toMatch(/lexical retrieval \(BM25\) only/);
    const hybrid = toolSummary(Object.assign(validateGatewayConfig({}), { fileSearch: { embeddings: { model: 'bge-m3' } } }), explorerWith([['file_search', true, true]]));
    expect(hybrid.active.file_search).toMatch(/hybrid retrieval .*bge-m3/);
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
