import { toolType } from '#tool-sdk/index.js';
import type { McpExecutionParams } from './mcp.tool-handler.js';

/** The `mcp` type's key: its handler's functions carry `McpExecutionParams` to its executor. */
export const MCP = toolType<McpExecutionParams>('mcp');
