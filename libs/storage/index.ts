export * from './state-store.interface.js';
export { StorageModule, createStateStore } from './storage.module.js';
export { MemoryStateStore } from './memory/memory-state-store.js';
export { SqliteStateStore, type SqliteStateStoreOptions } from './sqlite/sqlite-state-store.js';
export { PostgresStateStore, type PostgresStateStoreOptions } from './postgres/postgres-state-store.js';
export { DuplicateIdError } from './shared/duplicate-id.error.js';
export { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, parseListOptions } from './shared/list-window.util.js';
export { withItemId } from './shared/stored-item.util.js';
export { STORE_OBSERVER, observeStore, type StoreObserver } from './store-observer.js';
