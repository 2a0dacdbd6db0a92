import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ToolStorage } from '#tool-sdk/ports/tool-storage.js';
import { redactUrl } from '#config/url-redaction.js';
import type { StorageConfig } from './config/storage.config-section.js';
import { PostgresDatabase, SqliteDatabase } from './sql/sql-database.js';

/** The `ToolStorage` port on the operator's `storage` settings. */
export function toolStorage(storage: StorageConfig): ToolStorage {
  const inMemory = storage.driver === 'memory' || (storage.driver === 'sqlite' && storage.sqlitePath === ':memory:');
  const sqlitePath = (o: { file: string; path?: string }) => o.path ?? (inMemory ? ':memory:' : join(dirname(storage.sqlitePath), o.file));
  return {
    driver: storage.driver,
    shared: !inMemory,
    openSql(options) {
      if (storage.driver === 'postgres') {
        const { postgresUrl, connectTimeoutMs, queryTimeoutMs } = storage;
        return new PostgresDatabase({ connectionString: postgresUrl ?? '', connectTimeoutMs, queryTimeoutMs });
      }
      const path = sqlitePath(options);
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      return new SqliteDatabase(path);
    },
    describeSql(options) {
      return storage.driver === 'postgres' ? `PostgreSQL (storage.postgresUrl=${redactUrl(storage.postgresUrl ?? '')})` : `SQLite ${sqlitePath(options)}`;
    },
    // Imported when used: the storage module imports the settings module, which provides this port.
    openContainerRecords: async () => (await import('./storage.module.js')).createContainerRecordStore(storage),
  };
}
