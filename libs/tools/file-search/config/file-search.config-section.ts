import { defineConfigSection } from '#src/tool-contract.js';
import { FILE_SEARCH_KEYS, FILE_SEARCH_SETTINGS, type FileSearchSettings, parseFileSearchSettings } from './file-search-settings.js';

/** The `fileSearch` section: its database, the embeddings endpoint, and ingestion. */
export const fileSearchConfigSection = defineConfigSection<FileSearchSettings>({
  key: 'fileSearch',
  token: FILE_SEARCH_SETTINGS,
  env: [
    { env: 'FILE_SEARCH_EMBEDDING_MODEL', path: 'embeddings.model', kind: 'string' },
    { env: 'FILES_MAX_PER_OWNER', path: 'maxFilesPerOwner', kind: 'int' },
    { env: 'FILES_MAX_BYTES_PER_OWNER', path: 'maxBytesPerOwner', kind: 'int' },
  ],
  keys: FILE_SEARCH_KEYS,
  // Storage follows the gateway's own `storage` section, hence the whole config.
  parse: (_section, config) => parseFileSearchSettings(config),
});
