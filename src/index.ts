/**
 * The public surface of Switchyard: what a host application or a third-party
 * tool-type module imports.
 */
export { GatewayModule, type GatewayModuleOptions, type GatewayModuleAsyncOptions } from './gateway.module.js';
export { configureGatewayApp } from './configure-app.js';
export * from './tool-contract.js';
export { StateModule } from '../libs/state/state.module.js';
export { MessagesModule } from '../libs/messages/messages.module.js';
export { FlowGate } from '../libs/core/protocol/flow-gate.js';
export { loadGatewayConfig, validateGatewayConfig, ConfigError } from '../libs/config/config.loader.js';
export { ToolHandlerExplorer, ToolRegistrationError } from '../libs/core/handlers/tool-handler.explorer.js';
export { UPSTREAM_CLIENT, type UpstreamClient } from '../libs/upstream/upstream-client.interface.js';
export { RESPONSE_STATE, type ResponseStateStore, type CompletedRun } from '../libs/core/loop/response-state.interface.js';
export { LoopService } from '../libs/core/loop/loop.service.js';
export type { ResponseRequest, PriorState } from '../libs/core/loop/response-request.js';
export type { ModelEvent, ModelRequest } from '../libs/core/protocol/model-events.js';
