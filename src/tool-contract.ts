/**
 * The tool SDK (libs/tool-sdk) as the package publishes it, with the
 * storage pieces a host application wires its own tool stores from.
 * `src/index.ts` re-exports all of it. Tool modules inside the repository
 * import `#tool-sdk/index.js` directly; a third party's import the same
 * names from `switchyard-gateway`.
 */
export * from '#tool-sdk/index.js';
export { ToolType, type KnownToolType } from '#tools/builtin-tool-types.js';
/** The state store's settings and the SQL drivers behind `ToolStorage`, for a host that builds a tool store outside the gateway module. */
export { readStorageSettings, parseStorageSettings, StorageConfig } from '#storage/config/storage.config-section.js';
export { createContainerRecordStore } from '#storage/storage.module.js';
export { MemoryContainerRecordStore } from '#storage/memory/memory-container-record.store.js';
export { PostgresDatabase, SqliteDatabase, type PostgresDatabaseOptions } from '#storage/sql/sql-database.js';
export { toolStorage } from '#storage/tool-storage.js';
