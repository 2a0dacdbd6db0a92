/**
 * The tool-type contract alone: what a tool-type module needs (decorators,
 * contracts, tokens, domain errors, validation functions), without the
 * gateway module. `src/index.ts` re-exports all of it. Built-in tool
 * modules import this file rather than `src/index.ts`, because the gateway
 * module imports them: going through the index would make an import cycle.
 */
export { GATEWAY_CONFIG, GatewayConfig } from '../libs/config/gateway-config.js';
export {
  defineConfigSection,
  registerConfigSection,
  type ConfigSection,
  type KeyShape,
  type SectionEnvSetting,
} from '../libs/config/config-section.js';
export { ToolType, type KnownToolType } from '../libs/tools/tool-type.enum.js';
export type { ToolTypeName } from '../libs/core/tool-types/tool-type.enum.js';
export { ToolHandlerProvider, GatewayExecutorProvider, InputItemProvider } from '../libs/core/handlers/tool-handler.decorators.js';
export type { InputItemHandler } from '../libs/core/handlers/input-item-handler.interface.js';
export { firstOfferedToolChoice, namedClientToolChoice } from '../libs/core/handlers/tool-choice.helpers.js';
export { simpleApprovals, simpleApprovalRequestItem, simpleApprovalToModelItems } from '../libs/core/handlers/call-item.helpers.js';
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
} from '../libs/core/handlers/tool-handler.interface.js';
export * as validation from '../libs/core/handlers/declaration-validation.js';
export { modelVisibleName } from '../libs/core/registry/model-names.js';
export { GatewayError, InvalidRequestError, NotFoundError } from '../libs/core/errors/gateway-error.js';
/** For a tool module's own HTTP routes (Files, Vector Stores...): the gateway's auth and error envelope apply to them. */
export { GatewayRoutes } from '../libs/http/routes/gateway-routes.decorator.js';
/** The one validation path of request bodies and list queries: failures are 400s naming the field in `param`. */
export { requestBody, validateFields, listQuery, ListQueryDto } from '../libs/responses/request/request-validation.js';
/** Who made a request on those routes (the API key's hash, the OIDC subject; null without authentication), to scope what it sees. */
export { requestOwner } from '../libs/http/request/request-owner.js';
export type * from '../libs/core/protocol/items.js';
