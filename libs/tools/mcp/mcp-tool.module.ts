import { Module } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '#config/gateway-config.js';
import { MCP_SETTINGS, parseMcpSettings } from './mcp.config.js';
import { McpConnectionPool } from './mcp-connection-pool.service.js';
import { McpGatewayExecutor } from './mcp.gateway-executor.js';
import { McpToolHandler } from './mcp.tool-handler.js';

/**
 * The `mcp` tool type: declaration handling and discovery (`McpToolHandler`),
 * execution (`McpGatewayExecutor`) and the shared connection pool. Its config
 * section (`config.mcp`) is validated when the module starts, so a bad
 * setting stops the boot with a message naming it.
 */
@Module({
  providers: [
    { provide: MCP_SETTINGS, inject: [GATEWAY_CONFIG], useFactory: (config: GatewayConfig) => parseMcpSettings(config.mcp) },
    McpConnectionPool,
    McpToolHandler,
    McpGatewayExecutor,
  ],
  exports: [McpConnectionPool, McpToolHandler, McpGatewayExecutor],
})
export class McpToolModule {}
