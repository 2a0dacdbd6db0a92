import type { StorageConfig } from '../config/storage.config-section.js';
import type { UsageStore } from '../usage-store.interface.js';
import { loadDriver } from '../shared/load-driver.js';
import { MemoryUsageStore } from './memory-usage.store.js';

/**
 * The usage store on the state's database (`storage.driver`): SQLite's file
 * is shared by the workers of one host, PostgreSQL by every replica. It
 * follows the driver even under a `STATE_STORE` override, as the background
 * store does. Drivers load only when chosen (optional peers).
 */
export async function createUsageStore(storage: StorageConfig): Promise<UsageStore> {
  switch (storage.driver) {
    case 'sqlite': {
      if (storage.sqlitePath === ':memory:') return new MemoryUsageStore();
      const { SqliteUsageStore } = await loadDriver(() => import('./sqlite-usage.store.js'), 'sqlite', 'better-sqlite3');
      return new SqliteUsageStore({ path: storage.sqlitePath });
    }
    case 'postgres': {
      const { PostgresUsageStore } = await loadDriver(() => import('./postgres-usage.store.js'), 'postgres', 'pg');
      return new PostgresUsageStore({ connectionString: storage.postgresUrl ?? '', connectTimeoutMs: storage.connectTimeoutMs });
    }
    default:
      return new MemoryUsageStore();
  }
}
