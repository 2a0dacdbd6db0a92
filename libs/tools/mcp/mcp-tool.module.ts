import { Module } from '@nestjs/common';
import { registerConfigSection } from '#tool-sdk/index.js';
import { mcpConfigSection } from './mcp.config.js';
import { McpConnectionPool } from './mcp-connection-pool.service.js';
import { McpGatewayExecutor } from './mcp.gateway-executor.js';
import { McpToolHandler } from './mcp.tool-handler.js';

/**
 * The `mcp` tool type: declaration handling and discovery (`McpToolHandler`),
 * execution (`McpGatewayExecutor`) and the shared connection pool. Its config
 * section (`mcpConfigSection`, with `MCP_ALLOWED_HOSTS`) is validated when the config is loaded and
 * again when the module starts, so a bad
 * setting stops the boot with a message naming it.
 */
@Module({
  providers: [registerConfigSection(mcpConfigSection), McpConnectionPool, McpToolHandler, McpGatewayExecutor],
  exports: [McpConnectionPool, McpToolHandler, McpGatewayExecutor],
})
export class McpToolModule {}
