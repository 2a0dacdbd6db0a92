export * from './state-store.interface.js';
export { StorageModule, STATE_STORE_OVERRIDE, createStateStore, createBackgroundStore, createContainerRecordStore } from './storage.module.js';
export * from '#tool-sdk/ports/container-records.js';
export { MemoryContainerRecordStore } from './memory/memory-container-record.store.js';
export * from './background-store.interface.js';
export { MemoryBackgroundStore } from './memory/memory-background.store.js';
export { MemoryStateStore } from './memory/memory-state-store.js';
// The SQLite and PostgreSQL stores are not re-exported: importing them loads
// their drivers (optional peers). `createStateStore` / `createBackgroundStore` load the one they need.
export type { SqliteStateStoreOptions } from './sqlite/sqlite-state-store.js';
export type { PostgresStateStoreOptions } from './postgres/postgres-state-store.js';
export type { PostgresBackgroundStoreOptions } from './postgres/postgres-background.store.js';
export { DuplicateIdError } from './shared/duplicate-id.error.js';
export { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, parseListOptions } from './shared/list-window.util.js';
export { withItemId } from './shared/stored-item.util.js';
export { STORE_OBSERVER, observeStore, type StoreObserver } from './store-observer.js';
export { StorageConfig, STORAGE_SETTINGS, storageConfigSection, parseStorageSettings, readStorageSettings } from './config/storage.config-section.js';
export { StorageSettingsModule } from './config/storage-settings.module.js';
export * from './usage-store.interface.js';
export { MemoryUsageStore } from './usage/memory-usage.store.js';
export { createUsageStore } from './usage/create-usage-store.js';
// Drivers are imported when it runs: loading this loads neither.
export { rekeyStoredOwners, rekeySqliteOwners, rekeyPostgresOwners, OWNER_TABLES, type OwnerRekey } from './owner-rekey.js';
export * from './catalog.interface.js';
