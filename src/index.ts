/**
 * The public surface of Switchyard: what a host application or a third-party
 * tool-type module imports.
 */
export { GatewayModule, type GatewayModuleOptions, type GatewayModuleAsyncOptions } from './gateway.module.js';
export { configureGatewayApp } from './configure-app.js';
export { StateModule } from '../libs/state/state.module.js';
export { MessagesModule } from '../libs/messages/messages.module.js';
export { FlowGate } from '../libs/core/protocol/flow-gate.js';
export { GATEWAY_CONFIG, GatewayConfig } from '../libs/config/gateway-config.js';
export { loadGatewayConfig, validateGatewayConfig, ConfigError } from '../libs/config/config.loader.js';
export { ToolType, type ToolTypeName } from '../libs/core/tool-types/tool-type.enum.js';
export { ToolHandlerProvider, GatewayExecutorProvider } from '../libs/core/handlers/tool-handler.decorators.js';
export { ToolHandlerExplorer, ToolRegistrationError } from '../libs/core/handlers/tool-handler.explorer.js';
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
} from '../libs/core/handlers/tool-handler.interface.js';
export * as validation from '../libs/core/handlers/declaration-validation.js';
export { modelVisibleName } from '../libs/core/registry/model-names.js';
export { GatewayError, InvalidRequestError, NotFoundError } from '../libs/core/errors/gateway-error.js';
export { UPSTREAM_CLIENT, type UpstreamClient } from '../libs/upstream/upstream-client.interface.js';
export { RESPONSE_STATE, type ResponseStateStore, type CompletedRun } from '../libs/core/loop/response-state.interface.js';
export { LoopService } from '../libs/core/loop/loop.service.js';
export type { ResponseRequest, PriorState } from '../libs/core/loop/response-request.js';
export type * from '../libs/core/protocol/items.js';
export type { ModelEvent, ModelRequest } from '../libs/core/protocol/model-events.js';
export { RUN_OBSERVER, type RunObserver, type RunTrace, type RoundTrace, type ToolCallTrace, type UpstreamTrace } from '../libs/core/loop/run-observer.interface.js';
export { STORE_OBSERVER, type StoreObserver } from '../libs/storage/store-observer.js';
export { LOG_SINK, type LineSink, installGracefulDrain, GatewayMetrics, TracingService } from '../libs/observability/index.js';
