import { defineConfigSection } from '#tool-sdk/index.js';
import { FILE_SEARCH_KEYS, FILE_SEARCH_SETTINGS, type FileSearchSettings, parseFileSearchSettings } from './file-search-settings.js';

/** The `fileSearch` section: its database, the embeddings endpoint, and ingestion. */
export const fileSearchConfigSection = defineConfigSection<FileSearchSettings>({
  key: 'fileSearch',
  token: FILE_SEARCH_SETTINGS,
  env: [
    { env: 'FILE_SEARCH_EMBEDDING_MODEL', path: 'embeddings.model', kind: 'string' },
    { env: 'FILE_SEARCH_EMBEDDING_BASE_URL', path: 'embeddings.baseUrl', kind: 'string' },
    { env: 'FILE_SEARCH_EMBEDDING_API_KEY', path: 'embeddings.apiKey', kind: 'string', secret: true },
    { env: 'FILE_SEARCH_EMBEDDING_BATCH_SIZE', path: 'embeddings.batchSize', kind: 'int' },
    { env: 'FILE_SEARCH_EMBEDDING_DIMENSIONS', path: 'embeddings.dimensions', kind: 'int' },
    { env: 'FILE_SEARCH_EMBEDDING_TIMEOUT_MS', path: 'embeddings.timeoutMs', kind: 'int' },
    { env: 'FILE_SEARCH_INGESTION_CONCURRENCY', path: 'ingestion.concurrency', kind: 'int' },
    { env: 'FILE_SEARCH_INGESTION_NICENESS', path: 'ingestion.niceness', kind: 'int' },
    { env: 'FILES_MAX_PER_OWNER', path: 'maxFilesPerOwner', kind: 'int' },
    { env: 'FILES_MAX_BYTES_PER_OWNER', path: 'maxBytesPerOwner', kind: 'int' },
  ],
  keys: FILE_SEARCH_KEYS,
  // Storage follows the gateway's own `storage` section, hence the whole config.
  parse: (_section, config) => parseFileSearchSettings(config),
});
