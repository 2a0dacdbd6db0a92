/**
 * The public surface of Switchyard: what a host application or a third-party
 * tool-type module imports.
 */
export { GatewayModule, type GatewayModuleOptions, type GatewayModuleExtras, type GatewayModuleAsyncOptions } from './gateway.module.js';
export { configureGatewayApp } from './configure-app.js';
export * from './tool-contract.js';
export { StateModule } from '../libs/state/state.module.js';
export { MessagesModule } from '../libs/messages/messages.module.js';
export { FlowGate } from '../libs/core/protocol/flow-gate.js';
export { ConfigError, type LoadConfigOptions } from '../libs/config/config.loader.js';
export { loadGatewayConfig, validateGatewayConfig, gatewayConfigSections } from './gateway-config.loader.js';
export { configSectionsOf } from '../libs/config/config-section.js';
export { ToolHandlerExplorer, ToolRegistrationError } from '../libs/core/handlers/tool-handler.explorer.js';
export { UPSTREAM_CLIENT, type UpstreamClient } from '../libs/core/upstream/upstream-client.interface.js';
export { RESPONSE_STATE, type ResponseStateStore, type CompletedRun } from '../libs/core/loop/response-state.interface.js';
export { LoopService } from '../libs/core/loop/loop.service.js';
export type { ResponseRequest, PriorState } from '../libs/core/loop/response-request.js';
export type { ModelEvent, ModelRequest } from '../libs/core/protocol/model-events.js';
export { RUN_OBSERVER, type RunObserver, type RunTrace, type RoundTrace, type ToolCallTrace, type UpstreamTrace } from '../libs/core/loop/run-observer.interface.js';
export { STORE_OBSERVER, type StoreObserver } from '../libs/storage/store-observer.js';
export { LOG_SINK, type LineSink, installGracefulDrain, GatewayMetrics, TracingService } from '../libs/observability/index.js';
export { simpleCallPlan, simpleCallOutput, simpleCallToModelItems } from '../libs/core/handlers/call-item.helpers.js';
export { newId } from '../libs/core/ids.js';
export { emptyUsage, addUsage } from '../libs/core/protocol/items.js';
export type { ResponseStreamEvent } from '../libs/core/loop/response-events.js';
export { TERMINAL_EVENTS } from '../libs/core/loop/loop.service.js';
export { ResponsesService, type ResponseCaller, type ResponseObject } from '../libs/responses/service/responses.service.js';
export { CreateResponseParser } from '../libs/responses/request/create-response.parser.js';
export { OpenAiExceptionFilter } from '../libs/http/errors/openai-exception.filter.js';
export { GatewayRoutes } from '../libs/http/routes/gateway-routes.decorator.js';
export { toErrorEnvelope, type ErrorEnvelope } from '../libs/http/errors/error-envelope.js';
/** What a gateway route's handler Observable emits once its answer is written: a host's interceptor can time and size it. */
export type { EdgeOutcome } from '../libs/http/responder/edge-responder.js';
export { GatewayOverrideError, type GatewayOverride } from '../libs/core/overrides/gateway-override.js';
export { DEFAULT_UPSTREAM_CLIENT, UpstreamModule } from '../libs/upstream/upstream.module.js';
export { createUpstreamClient } from '../libs/upstream/upstream-client.factory.js';
export { DialectClient } from '../libs/upstream/dialect-client.base.js';
export { ResponsesDialectClient } from '../libs/upstream/responses-dialect.client.js';
export { ChatDialectClient } from '../libs/upstream/chat-dialect.client.js';
export type { InferOptions, UpstreamCallContext, ModelInfo } from '../libs/core/upstream/upstream-client.interface.js';
export { STATE_STORE, type StateStore, type StoredResponse, type Conversation, type ConversationItem, type ListOptions, type Page } from '../libs/storage/state-store.interface.js';
export { MemoryStateStore } from '../libs/storage/memory/memory-state-store.js';
export { StorageModule, createStateStore } from '../libs/storage/storage.module.js';
export { UpstreamConfig, TimeoutConfig, ServerConfig, ToolsConfig, AuthConfig, StorageConfig, TransportsConfig, ObservabilityConfig } from '../libs/config/gateway-config.js';
