import { join } from 'node:path';
import { IsIn, IsInt, IsOptional, IsString, Min } from 'class-validator';
import { defineConfigSection } from '#config/config-section.js';

/** The `storage` section: where stored responses, conversations and background runs live. */
export class StorageConfig {
  @IsIn(['sqlite', 'postgres', 'memory']) driver: 'sqlite' | 'postgres' | 'memory' = 'sqlite';
  @IsString() sqlitePath = '.switchyard/state.sqlite';
  @IsOptional() @IsString() postgresUrl?: string;
  /**
   * PostgreSQL: longest wait for a connection (new or pooled). An
   * unreachable database then answers 503 quickly instead of holding requests.
   */
  @IsInt() @Min(1) connectTimeoutMs = 3_000;
  /** PostgreSQL: longest wait for one query's answer (a schema change at start-up may wait longer for its locks). */
  @IsInt() @Min(1) queryTimeoutMs = 5_000;
}

/** Nest token for the validated `storage` section. */
export const STORAGE_SETTINGS = Symbol('STORAGE_SETTINGS');

/** Checked with the rest, so that boot fails before any module opens a connection. */
function postgresNeedsUrl(storage: StorageConfig): string[] {
  if (storage.driver !== 'postgres' || storage.postgresUrl?.trim()) return [];
  return ['storage.postgresUrl (DATABASE_URL) is required when storage.driver (STORAGE_DRIVER) is postgres: set DATABASE_URL=postgres://user:password@host:5432/database'];
}

export const storageConfigSection = defineConfigSection({
  key: 'storage',
  type: StorageConfig,
  check: postgresNeedsUrl,
  token: STORAGE_SETTINGS,
  fromDataDir: (dataDir) => ({ sqlitePath: join(dataDir, 'state.sqlite') }),
  env: [
    { env: 'STORAGE_DRIVER', path: 'driver', kind: 'string' },
    { env: 'SQLITE_PATH', path: 'sqlitePath', kind: 'string' },
    { env: 'DATABASE_URL', path: 'postgresUrl', kind: 'string', secret: true },
    { env: 'STORE_CONNECT_TIMEOUT_MS', path: 'connectTimeoutMs', kind: 'int' },
    { env: 'STORE_QUERY_TIMEOUT_MS', path: 'queryTimeoutMs', kind: 'int' },
  ],
});

/** The `storage` section of a raw or validated section value (defaults when absent). */
export const parseStorageSettings = storageConfigSection.parse;
/** The storage settings of a gateway config, for code outside the Nest container. */
export const readStorageSettings = storageConfigSection.read;
