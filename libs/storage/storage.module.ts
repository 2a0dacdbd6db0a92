import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { GATEWAY_CONFIG, GatewayConfig, StorageConfig } from '../config/gateway-config.js';
import { MemoryStateStore } from './memory/memory-state-store.js';
import { PostgresStateStore } from './postgres/postgres-state-store.js';
import { SqliteStateStore } from './sqlite/sqlite-state-store.js';
import { STATE_STORE, type StateStore } from './state-store.interface.js';
import { STORE_OBSERVER, observeStore, type StoreObserver } from './store-observer.js';
import { BACKGROUND_STORE, type BackgroundStore } from './background-store.interface.js';
import { MemoryBackgroundStore } from './memory/memory-background.store.js';
import { PostgresBackgroundStore } from './postgres/postgres-background.store.js';
import { SqliteBackgroundStore } from './sqlite/sqlite-background.store.js';

function storageOf(config: GatewayConfig): StorageConfig {
  // A hand-built config may omit the section; the class defaults are the documented ones.
  return config.storage ?? new StorageConfig();
}

/**
 * Picks the backend named by `storage.driver`. Settings the driver needs are
 * checked here, at boot, so a missing one fails start-up with its name
 * instead of failing the first request that stores something.
 */
export function createStateStore(storage: StorageConfig): StateStore {
  const driver: string = storage.driver;
  switch (storage.driver) {
    case 'memory':
      return new MemoryStateStore();
    case 'sqlite':
      if (typeof storage.sqlitePath !== 'string' || storage.sqlitePath.trim() === '') {
        throw new Error("storage.sqlitePath must name a database file (or ':memory:') when storage.driver is 'sqlite'.");
      }
      return new SqliteStateStore({ path: storage.sqlitePath });
    case 'postgres':
      if (typeof storage.postgresUrl !== 'string' || storage.postgresUrl.trim() === '') {
        throw new Error(
          "storage.postgresUrl is required when storage.driver is 'postgres' (e.g. postgres://user:password@host:5432/database).",
        );
      }
      return new PostgresStateStore({ connectionString: storage.postgresUrl });
    default:
      throw new Error(`storage.driver must be 'sqlite', 'postgres' or 'memory', not '${driver}'.`);
  }
}

/**
 * The background-run store beside the state store, on the same database. Call
 * after `createStateStore`, which has already checked the driver's settings.
 */
export function createBackgroundStore(storage: StorageConfig): BackgroundStore {
  switch (storage.driver) {
    case 'sqlite':
      return new SqliteBackgroundStore({ path: storage.sqlitePath });
    case 'postgres':
      return new PostgresBackgroundStore({ connectionString: storage.postgresUrl ?? '' });
    default:
      return new MemoryBackgroundStore();
  }
}

/** Names the setting behind a start-up failure, without leaking a password. */
function describeTarget(storage: StorageConfig): string {
  if (storage.driver === 'sqlite') return `storage.sqlitePath=${storage.sqlitePath}`;
  if (storage.driver !== 'postgres') return `storage.driver=${storage.driver}`;
  try {
    const url = new URL(storage.postgresUrl ?? '');
    if (url.password) url.password = '***';
    return `storage.postgresUrl=${url.toString()}`;
  } catch {
    return 'storage.postgresUrl';
  }
}

/**
 * Provides `STATE_STORE` for the configured driver. Migrations run at module
 * init, before the app listens; the store closes at application shutdown,
 * the last hook, so requests finishing during shutdown can still save.
 * Expects `GATEWAY_CONFIG` to be provided globally.
 */
@Module({
  providers: [
    {
      provide: STATE_STORE,
      inject: [GATEWAY_CONFIG, { token: STORE_OBSERVER, optional: true }],
      useFactory: (config: GatewayConfig, observer?: StoreObserver): StateStore => {
        const store = createStateStore(storageOf(config));
        return observer ? observeStore(store, storageOf(config).driver, observer) : store;
      },
    },
    {
      provide: BACKGROUND_STORE,
      inject: [GATEWAY_CONFIG, STATE_STORE],
      useFactory: (config: GatewayConfig): BackgroundStore => createBackgroundStore(storageOf(config)),
    },
  ],
  exports: [STATE_STORE, BACKGROUND_STORE],
})
export class StorageModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(STATE_STORE) private readonly store: StateStore,
    @Inject(BACKGROUND_STORE) private readonly background: BackgroundStore,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    try {
      await this.store.init();
      await this.background.init();
    } catch (e) {
      const storage = storageOf(this.config);
      const reason = e instanceof Error ? e.message : String(e);
      throw new Error(`Could not start the '${storage.driver}' state store (${describeTarget(storage)}): ${reason}`, {
        cause: e,
      });
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.background.close();
    await this.store.close();
  }
}
