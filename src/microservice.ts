/**
 * Switchyard over Nest microservice transports (`switchyard-gateway/microservice`).
 * A separate entry point so that an app serving only HTTP needs neither
 * `@nestjs/microservices` nor a broker client installed.
 */
export { GatewayMicroserviceModule } from '#responses/rpc/responses-microservice.module.js';
export { ResponsesRpcController, responsesRpcController, type ResponsesRpcHandlers } from '#responses/rpc/responses.rpc-controller.js';
export { RpcRunRegistry } from '#responses/rpc/rpc-run.registry.js';
export { RPC_RUN_CONTEXT, type RpcRunContext } from '#responses/rpc/rpc-run-context.js';
export {
  RESPONSES_PATTERNS,
  SERVED_RESPONSES_PATTERNS,
  responsesPatterns,
  type ResponsesPatterns,
  type ResponsesRpcRequest,
  type ResponsesRpcCancel,
} from '#responses/rpc/responses-rpc.patterns.js';
export { SwitchyardRpcClient, SwitchyardRpcError, type SwitchyardRpcClientOptions } from '#responses/rpc/switchyard-rpc.client.js';
export { OpenAiRpcExceptionFilter } from '#responses/rpc/openai-rpc-exception.filter.js';
export { gatewayTransports, connectGatewayTransports } from '#responses/rpc/gateway-transports.js';
export { RedisPatternsTakenError } from '#responses/rpc/redis-serve-lock.js';
export { toRpcError, isRpcErrorPayload, type RpcErrorPayload } from '#edge/errors/rpc-error.js';
