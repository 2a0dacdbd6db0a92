/**
 * The public surface of Switchyard: what a host application or a third-party
 * tool-type module imports.
 */
export { GatewayModule, type GatewayModuleOptions, type GatewayModuleExtras, type GatewayModuleAsyncOptions } from './gateway.module.js';
export { ConsoleModule } from '#console/console.module.js';
export { configureGatewayApp } from './configure-app.js';
export { GatewayExpressAdapter, gatewayHttpAdapter } from './gateway-http-adapter.js';
export { definePlugin, type SwitchyardPlugin } from './plugin.js';
export * from './tool-contract.js';
export { StateModule } from '#state/state.module.js';
export { MessagesModule } from '#messages/messages.module.js';
export { FlowGate } from '#core/protocol/flow-gate.js';
export { ConfigError, type LoadConfigOptions } from '#config/config.loader.js';
export { loadGatewayConfig, validateGatewayConfig, gatewayConfigSections } from './gateway-config.loader.js';
export { configSectionsOf } from '#config/config-section.js';
/** Why the tools that run code are off (listening beyond loopback without credentials), for a host's own start-up line. */
export { codeExecutionRefusal } from '#config/exposure.js';
export { ToolHandlerExplorer, ToolRegistrationError } from '#core/handlers/tool-handler.explorer.js';
export { UPSTREAM_CLIENT, type UpstreamClient } from '#core/upstream/upstream-client.interface.js';
export { RESPONSE_STATE, type ResponseStateStore, type CompletedRun } from '#core/loop/response-state.interface.js';
export { LoopService } from '#core/loop/loop.service.js';
export type { ResponseRequest, PriorState } from '#core/loop/response-request.js';
export type { ModelEvent, ModelRequest } from '#core/protocol/model-events.js';
export { RUN_OBSERVER, type RunObserver, type RunTrace, type RoundTrace, type ToolCallTrace, type UpstreamTrace } from '#core/loop/run-observer.interface.js';
export { STORE_OBSERVER, type StoreObserver } from '#storage/store-observer.js';
export { LOG_SINK, type LineSink, installGracefulDrain, GatewayMetrics, TracingService } from '#observability/index.js';
export { simpleCallPlan, simpleCallOutput, simpleCallToModelItems } from '#tool-sdk/helpers/call-items.js';
export { newId } from '#tool-sdk/ids.js';
export { emptyUsage, addUsage } from '#tool-sdk/items.js';
export type { ResponseStreamEvent } from '#core/loop/response-events.js';
export { TERMINAL_EVENTS } from '#core/loop/loop.service.js';
export { ResponsesService, type ResponseCaller, type ResponseObject } from '#responses/service/responses.service.js';
export { CreateResponseParser } from '#responses/request/create-response.parser.js';
export { OpenAiExceptionFilter } from '#edge/errors/openai-exception.filter.js';
export { GatewayRoutes } from '#tool-sdk/routes/gateway-routes.js';
export { toErrorEnvelope, type ErrorEnvelope } from '#edge/errors/error-envelope.js';
/** What a gateway route's handler settles with once its answer is written: a host's interceptor can time and size it. */
export type { EdgeOutcome } from '#edge/responder/edge-responder.js';
export { GatewayOverrideError, type GatewayOverride } from '#core/overrides/gateway-override.js';
export { DEFAULT_UPSTREAM_CLIENT, UpstreamModule } from '#upstream/upstream.module.js';
export { createUpstreamClient } from '#upstream/upstream-client.factory.js';
export { DialectClient } from '#upstream/dialect-client.base.js';
export { ResponsesDialectClient } from '#upstream/responses-dialect.client.js';
export { ChatDialectClient } from '#upstream/chat-dialect.client.js';
export type { InferOptions, UpstreamCallContext, ModelInfo } from '#core/upstream/upstream-client.interface.js';
export { STATE_STORE, type StateStore, type StoredResponse, type Conversation, type ConversationItem, type ListOptions, type Page } from '#storage/state-store.interface.js';
export { MemoryStateStore } from '#storage/memory/memory-state-store.js';
export { StorageModule, createStateStore } from '#storage/storage.module.js';
export { UpstreamConfig, TimeoutConfig, ServerConfig, ToolsConfig } from '#config/gateway-config.js';
export * from './config-sections.js';
