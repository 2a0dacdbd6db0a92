/**
 * The tool-type contract alone: what a tool-type module needs (decorators,
 * contracts, tokens, domain errors, validation functions), without the
 * gateway module. `src/index.ts` re-exports all of it. Built-in tool
 * modules import this file rather than `src/index.ts`, because the gateway
 * module imports them: going through the index would make an import cycle.
 */
export { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
export { defineConfigSection, registerConfigSection, type ConfigSection, type KeyShape, type SectionEnvSetting } from '#config/config-section.js';
/** The state store's settings, for a tool that keeps its data beside the state (file search). */
export { readStorageSettings, parseStorageSettings, StorageConfig } from '#storage/config/storage.config-section.js';
/** Records shared by the gateway's processes for a tool whose state has one home process (code-interpreter containers). */
export { createContainerRecordStore } from '#storage/storage.module.js';
export { MemoryContainerRecordStore } from '#storage/memory/memory-container-record.store.js';
export type * from '#storage/container-record-store.interface.js';
export { ToolType, type KnownToolType } from '#tools/tool-type.enum.js';
export type { ToolTypeName } from '#core/tool-types/tool-type.enum.js';
export { ToolHandlerProvider, GatewayExecutorProvider, InputItemProvider } from '#core/handlers/tool-handler.decorators.js';
export type { InputItemHandler } from '#core/handlers/input-item-handler.interface.js';
export { firstOfferedToolChoice, namedClientToolChoice } from '#core/handlers/tool-choice.helpers.js';
export { simpleApprovals, simpleApprovalRequestItem, simpleApprovalToModelItems } from '#core/handlers/call-item.helpers.js';
export type {
  ToolHandler,
  GatewayExecutor,
  GatewayCall,
  GatewayCallResult,
  GatewayEventPlan,
  ExecutionContext,
  NormalizedTool,
  ToolOutput,
  PlannedEvent,
  DiscoveryResult,
  DiscoveryContext,
  HistoryContext,
  ClientCallShape,
  ToolChoiceContract,
  ToolChoiceContext,
  ToolChoiceTarget,
  ApprovalContract,
  ApprovalAnswer,
  ApprovalVerdict,
} from '#core/handlers/tool-handler.interface.js';
export * as validation from '#core/handlers/declaration-validation.js';
export { modelVisibleName } from '#core/registry/model-names.js';
export { GatewayError, InvalidRequestError, NotFoundError } from '#core/errors/gateway-error.js';
/** For a tool module's own HTTP routes (Files, Vector Stores...): the gateway's auth and error envelope apply to them. */
export { GatewayRoutes } from '#edge/routes/gateway-routes.decorator.js';
/** The one validation path of request bodies and list queries: failures are 400s naming the field in `param`. */
export { requestBody, validateFields, listQuery, ListQueryDto } from '#edge/request/request-validation.js';
/** Who made a request on those routes (the API key's hash, the OIDC subject; null without authentication), to scope what it sees. */
export { requestOwner } from '#edge/request/request-owner.js';
export type * from '#core/protocol/items.js';
// The SQL port a tool module keeps tables of its own through (file search), on the gateway's drivers with its error mapping.
export { DriverMissingError, PostgresDatabase, SqliteDatabase, type PostgresDatabaseOptions, type Row, type SqlDatabase, type SqlValue } from '#storage/sql/sql-database.js';
/** The Files API's files by id, for a tool that takes `file-...` ids (provided by the file-search module). */
export { STORED_FILES, type StoredFiles } from '#core/files/stored-files.interface.js';
