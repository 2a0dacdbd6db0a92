import { IsIn, IsInt, IsOptional, IsString, Min } from 'class-validator';
import { classSectionKeys, parseClassSection } from '#config/class-config-section.js';
import { defineConfigSection } from '#config/config-section.js';
import type { GatewayConfig } from '#config/gateway-config.js';

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
  /** PostgreSQL: longest wait for one query's answer. */
  @IsInt() @Min(1) queryTimeoutMs = 5_000;
}

/** Nest token for the validated `storage` section. */
export const STORAGE_SETTINGS = Symbol('STORAGE_SETTINGS');

/** Checked with the rest, so that boot fails before any module opens a connection. */
function postgresNeedsUrl(storage: StorageConfig): string[] {
  if (storage.driver !== 'postgres' || storage.postgresUrl?.trim()) return [];
  return ['storage.postgresUrl (DATABASE_URL) is required when storage.driver (STORAGE_DRIVER) is postgres: set DATABASE_URL=postgres://user:password@host:5432/database'];
}

/** The `storage` section of a raw or validated section value (defaults when absent). */
export function parseStorageSettings(section: unknown): StorageConfig {
  return parseClassSection('storage', StorageConfig, section, postgresNeedsUrl);
}

/**
 * The storage settings of a gateway config, for code that runs before (or
 * outside) the Nest container: the host's start-up checks, file search, which
 * follows the state store's database.
 */
export function readStorageSettings(config: GatewayConfig): StorageConfig {
  return parseStorageSettings(config.storage);
}

export const storageConfigSection = defineConfigSection<StorageConfig>({
  key: 'storage',
  token: STORAGE_SETTINGS,
  env: [
    { env: 'STORAGE_DRIVER', path: 'driver', kind: 'string' },
    { env: 'SQLITE_PATH', path: 'sqlitePath', kind: 'string' },
    { env: 'DATABASE_URL', path: 'postgresUrl', kind: 'string' },
    { env: 'STORE_CONNECT_TIMEOUT_MS', path: 'connectTimeoutMs', kind: 'int' },
    { env: 'STORE_QUERY_TIMEOUT_MS', path: 'queryTimeoutMs', kind: 'int' },
  ],
  keys: classSectionKeys(StorageConfig),
  parse: (section) => parseStorageSettings(section),
});
