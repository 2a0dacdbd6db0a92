import { defineConfigSection } from '#tool-sdk/index.js';
import { MCP_SETTINGS, MCP_SETTINGS_KEYS, type McpSettings, parseMcpSettings } from './mcp.config.js';

/** The `mcp` section: operator-configured servers and the hosts requests may name. */
export const mcpConfigSection = defineConfigSection<McpSettings>({
  key: 'mcp',
  token: MCP_SETTINGS,
  env: [{ env: 'MCP_ALLOWED_HOSTS', path: 'allowedHosts', kind: 'list' }],
  keys: MCP_SETTINGS_KEYS,
  parse: (section) => parseMcpSettings(section),
});
