/**
 * The tool SDK: everything a tool-type module is written against, and
 * nothing of the gateway above it. The built-in modules (libs/tools/*)
 * import this file alone, as a third party's module imports the same names
 * from the `switchyard-gateway` package. See README.md beside it.
 */

// The contract, one file per capability (contract/).
export type * from './contract/index.js';
export type * from './items.js';
export { emptyUsage, addUsage } from './items.js';
export { toolType, type ToolTypeKey, type ToolTypeName } from './tool-type.js';
export { RequestLocal, RequestToolContext } from './request-local.js';

// Registration: the explorer finds tagged providers at start-up.
export { ToolHandlerProvider, GatewayExecutorProvider, InputItemProvider } from './decorators.js';

// Domain errors: what a module throws, one class per kind of failure and no HTTP status; the gateway's edge gives each kind its status.
export {
  GatewayError,
  InvalidRequestError,
  NotFoundError,
  ConflictError,
  TooLargeError,
  UnsupportedMediaTypeError,
  ForbiddenError,
  RateLimitError,
  TooManyInFlightError,
  ClientClosedError,
  UnavailableError,
  StoreUnavailableError,
  DriverMissingError,
  isGatewayError,
} from './errors.js';

// Helpers for the common shapes (simple call items and approvals, tool_choice forms, declaration fields, names).
export {
  simpleCallPlan,
  simpleCallOutput,
  simpleCallToModelItems,
  simpleApprovals,
  simpleApprovalRequestItem,
  simpleApprovalToModelItems,
  clientCallModelName,
} from './helpers/call-items.js';
export { outputText } from './helpers/output-text.js';
export { outputContent, isMediaPart } from './helpers/output-content.js';
export { restoredClientFunction, refusedCall } from './helpers/restored-client-function.js';
export { firstOfferedToolChoice, namedClientToolChoice } from './helpers/tool-choice.js';
export * as validation from './helpers/declaration-validation.js';
export {
  requireString,
  optionalString,
  optionalBoolean,
  optionalInteger,
  optionalObject,
  optionalStringArray,
  requireFunctionName,
  parametersSchema,
} from './helpers/declaration-validation.js';
export { modelVisibleName, MAX_MODEL_NAME_LENGTH, type TakenNames } from './helpers/model-names.js';
export { newId } from './ids.js';
/** Kept (frozen) values whose JSON text is written once: a handler that keeps what it lists shares it between requests. */
export { freezeJson, frozenForms, mapFrozenOnce, type FrozenForms } from './helpers/frozen-json.js';
export { assertStorableText, isStorableText, unstorableTextError } from './storable-text.js';

// Configuration: a module declares its own section; the gateway validates it at boot.
export { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
export {
  defineConfigSection,
  registerConfigSection,
  classSectionKeys,
  type ClassSectionDeclaration,
  type ConfigSection,
  type EntriesSectionDeclaration,
  type KeyShape,
  type SectionEnvSetting,
} from '#config/config-section.js';
export { redactUrl, urlSecrets } from '#config/url-redaction.js';
/** Whether a tool that runs code may run on this gateway (off beyond loopback without credentials). */
export { codeExecutionRefusal } from '#config/exposure.js';

// HTTP routes of a module's own (Files, Vector Stores, Containers): the gateway's auth, text checks and error envelope apply.
export { GatewayRoutes, GATEWAY_ROUTES, ROUTE_ERROR_FILTER } from './routes/gateway-routes.js';
export { requestBody, validateFields, listQuery, ListQueryDto } from './routes/request-validation.js';
export { requestOwner } from './routes/request-owner.js';

// Ports the gateway provides: its storage, the Files API's files.
export { TOOL_STORAGE, type ToolStorage, type SqlDatabase, type Row, type SqlValue, type TxOptions } from './ports/tool-storage.js';
/** Taking a PostgreSQL advisory lock for a migration without the per-statement timeout: replicas starting together. */
export { takeAdvisoryXactLock, waitForLock, LockWaitTimeoutError, SCHEMA_LOCK_WAIT_MS, type LockQuery } from './ports/lock-wait.js';
export type * from './ports/container-records.js';
export { STORED_FILES, type StoredFiles } from './ports/stored-files.js';
export { MESSAGE_FILES, FILE_TEXT, type MessageFiles, type FileText } from './ports/message-files.interface.js';
export { BATCH_FILES, type BatchFiles } from './ports/batch-files.interface.js';
export type * from './ports/catalog.js';
export { CONSOLE_SECTION, ConsoleSectionProvider, type ConsoleSection, type ConsolePage } from './ports/console-sections.js';
