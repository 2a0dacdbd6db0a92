export { UPSTREAM_CLIENT, type ModelInfo, type UpstreamClient } from '#core/upstream/upstream-client.interface.js';
export { UpstreamModule } from './upstream.module.js';
export { createUpstreamClient } from './upstream-client.factory.js';
export { DialectClient } from './dialect-client.base.js';
export { ResponsesDialectClient } from './responses-dialect.client.js';
export { ChatDialectClient } from './chat-dialect.client.js';
export { HttpTransport, type HttpCall, type UpstreamBody } from './http-transport.js';
export { toResponsesRequest } from './responses-request.mapper.js';
export { toChatCompletionRequest } from './chat-request.mapper.js';
