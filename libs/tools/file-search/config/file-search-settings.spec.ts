import { loadGatewayConfig, validateGatewayConfig } from '#src/index.js';
import { parseFileSearchSettings } from './file-search-settings.js';

const settings = (raw: Record<string, unknown>) => parseFileSearchSettings(validateGatewayConfig(raw));

describe('fileSearch settings', () => {
  it('keeps the index where the gateway storage says unless fileSearch.sqlitePath names a file', () => {
    expect(settings({ storage: { driver: 'sqlite', sqlitePath: '/var/lib/sy/state.sqlite' } }).sqlitePath).toBeUndefined();
    expect(settings({ fileSearch: { sqlitePath: '/srv/index.sqlite' } }).sqlitePath).toBe('/srv/index.sqlite');
  });

  it('is lexical-only by default; embeddings default to the upstream', () => {
    expect(settings({}).embeddings).toBeUndefined();
    const s = settings({ upstream: { baseUrl: 'http://vllm:8000/v1/', apiKey: 'k' }, fileSearch: { embeddings: { model: 'bge-m3' } } });
    expect(s.embeddings).toEqual({ baseUrl: 'http://vllm:8000/v1', apiKey: 'k', model: 'bge-m3', batchSize: 64, dimensions: undefined, timeoutMs: 60_000 });
  });

  it('takes the embedding settings from environment variables as well as from the file', () => {
    const config = loadGatewayConfig({
      env: {
        FILE_SEARCH_EMBEDDING_MODEL: 'bge-m3',
        FILE_SEARCH_EMBEDDING_BASE_URL: 'http://embed:8080/v1',
        FILE_SEARCH_EMBEDDING_API_KEY: 'ek',
        FILE_SEARCH_EMBEDDING_BATCH_SIZE: '16',
        FILE_SEARCH_EMBEDDING_DIMENSIONS: '512',
        FILE_SEARCH_EMBEDDING_TIMEOUT_MS: '5000',
        FILE_SEARCH_INGESTION_NICENESS: '15',
      },
    });
    const s = parseFileSearchSettings(config);
    expect(s.embeddings).toEqual({ baseUrl: 'http://embed:8080/v1', apiKey: 'ek', model: 'bge-m3', batchSize: 16, dimensions: 512, timeoutMs: 5000 });
    expect(s.ingestion.niceness).toBe(15);
    expect(settings({}).ingestion.niceness).toBe(10);
  });

  it('stops the boot with the setting named', () => {
    expect(() => settings({ fileSearch: { embeddings: { batchSize: 8 } } })).toThrow('fileSearch.embeddings.model');
    expect(() => settings({ fileSearch: { maxFileBytes: 0 } })).toThrow('fileSearch.maxFileBytes');
    expect(() => settings({ fileSearch: { ingestion: { enabled: 'yes' } } })).toThrow('fileSearch.ingestion.enabled');
    expect(() => settings({ fileSearch: { ingestion: { concurrency: 1000 } } })).toThrow('fileSearch.ingestion.concurrency');
  });
});
