import { redactUrl } from '#config/url-redaction.js';
import { Inject, Module, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { StorageSettingsModule } from './config/storage-settings.module.js';
import { loadDriver } from './shared/load-driver.js';
import { STORAGE_SETTINGS, StorageConfig } from './config/storage.config-section.js';
import { MemoryStateStore } from './memory/memory-state-store.js';
import { STATE_STORE, type StateStore } from './state-store.interface.js';
import { STORE_OBSERVER, observeStore, type StoreObserver } from './store-observer.js';
import { BACKGROUND_STORE, type BackgroundStore } from './background-store.interface.js';
import { MemoryBackgroundStore } from './memory/memory-background.store.js';
import type { ContainerRecordStore } from '#tool-sdk/ports/container-records.js';
import { MemoryContainerRecordStore } from './memory/memory-container-record.store.js';
import { assertImplements } from '#core/overrides/gateway-override.js';

/**
 * A store the host supplies instead of the configured driver's (provided by
 * the host module, where the host's providers are in scope). It is
 * initialised and closed like the built-in ones.
 */
export const STATE_STORE_OVERRIDE = Symbol('STATE_STORE_OVERRIDE');

/** What a `StateStore` must have; an override missing one stops boot. */
export const STATE_STORE_METHODS = [
  'init',
  'close',
  'saveResponse',
  'getResponse',
  'deleteResponse',
  'listInputItems',
  'getChain',
  'createConversation',
  'getConversation',
  'updateConversation',
  'deleteConversation',
  'listConversationItems',
  'addConversationItems',
  'getConversationItem',
  'deleteConversationItem',
] as const;

/**
 * Picks the backend named by `storage.driver`. Settings the driver needs are
 * checked here, at boot, so a missing one fails start-up with its name
 * instead of failing the first request that stores something.
 */
export async function createStateStore(storage: StorageConfig): Promise<StateStore> {
  const driver: string = storage.driver;
  switch (storage.driver) {
    case 'memory':
      return new MemoryStateStore();
    case 'sqlite':
      if (typeof storage.sqlitePath !== 'string' || storage.sqlitePath.trim() === '') {
        throw new Error("storage.sqlitePath must name a database file (or ':memory:') when storage.driver is 'sqlite'.");
      }
      {
        const { SqliteStateStore } = await loadDriver(() => import('./sqlite/sqlite-state-store.js'), 'sqlite', 'better-sqlite3');
        return new SqliteStateStore({ path: storage.sqlitePath });
      }
    case 'postgres':
      if (typeof storage.postgresUrl !== 'string' || storage.postgresUrl.trim() === '') {
        throw new Error("storage.postgresUrl is required when storage.driver is 'postgres' (e.g. postgres://user:password@host:5432/database).");
      }
      {
        const { PostgresStateStore } = await loadDriver(() => import('./postgres/postgres-state-store.js'), 'postgres', 'pg');
        return new PostgresStateStore({
          connectionString: storage.postgresUrl,
          connectTimeoutMs: storage.connectTimeoutMs,
          queryTimeoutMs: storage.queryTimeoutMs,
        });
      }
    default:
      throw new Error(`storage.driver must be 'sqlite', 'postgres' or 'memory', not '${driver}'.`);
  }
}

/**
 * The background-run store beside the state store, on the same database. Call
 * after `createStateStore`, which has already checked the driver's settings.
 * It follows `storage.driver` even under a `STATE_STORE` override (memory
 * keeps background runs in the process).
 */
export async function createBackgroundStore(storage: StorageConfig): Promise<BackgroundStore> {
  switch (storage.driver) {
    case 'sqlite': {
      const { SqliteBackgroundStore } = await loadDriver(() => import('./sqlite/sqlite-background.store.js'), 'sqlite', 'better-sqlite3');
      return new SqliteBackgroundStore({ path: storage.sqlitePath });
    }
    case 'postgres': {
      const { PostgresBackgroundStore } = await loadDriver(() => import('./postgres/postgres-background.store.js'), 'postgres', 'pg');
      return new PostgresBackgroundStore({ connectionString: storage.postgresUrl ?? '', connectTimeoutMs: storage.connectTimeoutMs });
    }
    default:
      return new MemoryBackgroundStore();
  }
}

/**
 * Code-interpreter container records on the state's database (SQLite: the
 * same file, shared by the workers of one host; PostgreSQL: shared by every
 * replica), or in the process with the memory driver. The code-interpreter
 * module opens and closes it; it follows `storage.driver` even under a
 * `STATE_STORE` override, as the background store does.
 */
export async function createContainerRecordStore(storage: StorageConfig): Promise<ContainerRecordStore> {
  switch (storage.driver) {
    case 'sqlite': {
      if (storage.sqlitePath === ':memory:') return new MemoryContainerRecordStore();
      const { SqliteContainerRecordStore } = await loadDriver(() => import('./sqlite/sqlite-container-record.store.js'), 'sqlite', 'better-sqlite3');
      return new SqliteContainerRecordStore({ path: storage.sqlitePath });
    }
    case 'postgres': {
      const { PostgresContainerRecordStore } = await loadDriver(() => import('./postgres/postgres-container-record.store.js'), 'postgres', 'pg');
      return new PostgresContainerRecordStore({ connectionString: storage.postgresUrl ?? '', connectTimeoutMs: storage.connectTimeoutMs });
    }
    default:
      return new MemoryContainerRecordStore();
  }
}

/** Names the setting behind a start-up failure, without leaking a password. */
function describeTarget(storage: StorageConfig): string {
  if (storage.driver === 'sqlite') return `storage.sqlitePath=${storage.sqlitePath}`;
  if (storage.driver !== 'postgres') return `storage.driver=${storage.driver}`;
  try {
    new URL(storage.postgresUrl ?? '');
    return `storage.postgresUrl=${redactUrl(storage.postgresUrl ?? '')}`;
  } catch {
    return 'storage.postgresUrl';
  }
}

/**
 * Provides `STATE_STORE` for the configured driver. Migrations run at module
 * init, before the app listens; the store closes at application shutdown,
 * the last hook, so requests finishing during shutdown can still save.
 * Expects `GATEWAY_CONFIG` to be provided globally; the `storage` section is
 * read from it (`StorageSettingsModule`).
 */
@Module({
  imports: [StorageSettingsModule],
  providers: [
    {
      provide: STATE_STORE,
      inject: [STORAGE_SETTINGS, { token: STATE_STORE_OVERRIDE, optional: true }, { token: STORE_OBSERVER, optional: true }],
      // (An override is then held under two tokens: a store class with Nest hooks of
      // its own sees them twice. Its StateStore init() and close() run once, from here.)
      // The observer wraps whichever store serves, the host's override included.
      useFactory: async (storage: StorageConfig, override?: StateStore, observer?: StoreObserver): Promise<StateStore> => {
        const store = override ? assertImplements<StateStore>(override, 'STATE_STORE', STATE_STORE_METHODS) : await createStateStore(storage);
        return observer ? observeStore(store, override ? 'override' : storage.driver, observer) : store;
      },
    },
    {
      provide: BACKGROUND_STORE,
      inject: [STORAGE_SETTINGS, STATE_STORE],
      useFactory: (storage: StorageConfig): Promise<BackgroundStore> => createBackgroundStore(storage),
    },
  ],
  exports: [STATE_STORE, BACKGROUND_STORE],
})
export class StorageModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(STATE_STORE) private readonly store: StateStore,
    @Inject(BACKGROUND_STORE) private readonly background: BackgroundStore,
    @Inject(STORAGE_SETTINGS) private readonly storage: StorageConfig,
    @Optional() @Inject(STATE_STORE_OVERRIDE) private readonly override?: StateStore,
  ) {}

  async onModuleInit(): Promise<void> {
    try {
      await this.store.init();
      await this.background.init();
    } catch (e) {
      if (this.override) throw new Error(`Could not start the STATE_STORE override: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      const storage = this.storage;
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
