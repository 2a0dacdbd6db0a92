import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { StorageConfig } from '#storage/config/storage.config-section.js';
import { PostgresDatabase, SqliteDatabase } from '#storage/sql/sql-database.js';
import { BatchStore } from './batch.store.js';

/**
 * Batches live where the state does: on PostgreSQL, in its database (tables
 * `sy_batch*`), so every replica claims from one queue; on SQLite, in
 * `batches.sqlite` beside the state file, shared by the workers of one
 * machine; with the memory driver, in an in-memory SQLite database of this
 * process (a test and demo setting, lost at exit like the rest of its state).
 */
export function openBatchStore(storage: StorageConfig): BatchStore {
  if (storage.driver === 'postgres') {
    return new BatchStore(new PostgresDatabase({ connectionString: storage.postgresUrl!, connectTimeoutMs: storage.connectTimeoutMs, queryTimeoutMs: storage.queryTimeoutMs }));
  }
  if (storage.driver === 'memory' || storage.sqlitePath === ':memory:') return new BatchStore(new SqliteDatabase(':memory:'));
  const path = join(dirname(storage.sqlitePath), 'batches.sqlite');
  mkdirSync(dirname(path), { recursive: true });
  return new BatchStore(new SqliteDatabase(path));
}
