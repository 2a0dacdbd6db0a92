import { redactUrl } from '#config/url-redaction.js';
import type { JsonObject } from '#tool-sdk/items.js';

/** Fields of an MCP declaration that carry credentials for the MCP server. */
const MCP_SECRET_FIELDS = new Set(['headers', 'authorization']);

/**
 * Tool declarations as they may be stored. Handlers' public declarations are
 * already free of secrets; this is the second line of defence, so that a
 * handler that forgets never writes a bearer token into the database.
 */
export function storableTools(tools: unknown): JsonObject[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((tool) => {
    if (!tool || typeof tool !== 'object' || (tool as JsonObject).type !== 'mcp') return tool as JsonObject;
    const kept = Object.fromEntries(Object.entries(tool as JsonObject).filter(([key]) => !MCP_SECRET_FIELDS.has(key.toLowerCase())));
    if (typeof kept.server_url === 'string') kept.server_url = redactUrl(kept.server_url);
    return kept;
  });
}
