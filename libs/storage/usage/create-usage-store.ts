import type { StorageConfig } from '../config/storage.config-section.js';
import type { UsageStore } from '../usage-store.interface.js';
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
      const { SqliteUsageStore } = await import('./sqlite-usage.store.js');
      return new SqliteUsageStore({ path: storage.sqlitePath });
    }
    case 'postgres': {
      const { PostgresUsageStore } = await import('./postgres-usage.store.js');
      return new PostgresUsageStore({ connectionString: storage.postgresUrl ?? '', connectTimeoutMs: storage.connectTimeoutMs });
    }
    default:
      return new MemoryUsageStore();
  }
}
