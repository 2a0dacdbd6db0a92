import type { JsonObject } from '#tool-sdk/items.js';
import type { PublicToolChoice } from '#core/loop/response-request.js';
import { arrayAt, booleanAt, invalid, isObject, numberAt, objectAt, present, stringAt, unsupported } from './request-fields.js';
import type { ToolOrigin } from './tool-origin.js';

export interface MappedTools {
  tools: JsonObject[];
  origins: ToolOrigin[];
  toolChoice: PublicToolChoice;
  parallelToolCalls: boolean;
  /** Set when the body declares Anthropic's server web search: what the reply's blocks need from the loop. */
  include: string[];
  /** The smallest `max_uses` of a server tool, as the loop's limit on gateway calls; null without one. */
  maxToolCalls: number | null;
}

export interface ToolMappingOptions {
  /** Whether this gateway can run a web search (its web_search module has a provider). */
  webSearch: boolean;
}

/** `web_search_20250305` and the later dated versions of Anthropic's server web search. */
const SERVER_WEB_SEARCH = /^web_search_\d{8}$/;
// `filters.allowed_domains` / `filters.blocked_domains` in the declaration are the tool's own `allowed_domains` / `blocked_domains`.
const WEB_SEARCH_FIELDS = { filters: '' };
/** `web_search_call.results`: the pages each search showed the model, for `web_search_tool_result`. */
const SEARCH_RESULTS_INCLUDE = 'web_search_call.results';

const FUNCTION_FIELDS = { parameters: 'input_schema' };
const MCP_FIELDS = { server_label: 'name', server_url: 'url', authorization: 'authorization_token', allowed_tools: 'tool_configuration.allowed_tools' };

/**
 * Anthropic `tools`, `mcp_servers` and `tool_choice` → Responses tool
 * declarations. Custom tools are client-owned functions; MCP servers are
 * gateway-owned `mcp` tools the loop runs itself; the server web search
 * (`web_search_YYYYMMDD`) runs on the gateway's web_search module. Other
 * server tools (code execution, bash...) run on Anthropic's side: a request
 * that relies on one is refused rather than silently answered without it,
 * and so is web search when no search provider is configured.
 */
export function mapTools(body: JsonObject, options: ToolMappingOptions = { webSearch: false }): MappedTools {
  const tools: JsonObject[] = [];
  const origins: ToolOrigin[] = [];
  const include: string[] = [];
  let maxToolCalls: number | null = null;
  const choice = toolChoice(body.tool_choice);
  if (present(body.tools)) {
    const loaded = loadedToolNames(body.messages, choice.toolChoice);
    arrayAt(body.tools, 'tools').forEach((raw, i) => {
      if (isObject(raw) && typeof raw.type === 'string' && SERVER_WEB_SEARCH.test(raw.type)) {
        const search = webSearchTool(raw, `tools.${i}`, options);
        tools.push(search.declaration);
        origins.push({ path: `tools.${i}`, fields: WEB_SEARCH_FIELDS });
        if (!include.includes(SEARCH_RESULTS_INCLUDE)) include.push(SEARCH_RESULTS_INCLUDE);
        if (search.maxUses !== null) maxToolCalls = Math.min(maxToolCalls ?? search.maxUses, search.maxUses);
        return;
      }
      const declaration = functionTool(raw, `tools.${i}`);
      if (isDeferred(raw, `tools.${i}`) && !loaded.has(String(declaration.name))) return;
      tools.push(declaration);
      origins.push({ path: `tools.${i}`, fields: FUNCTION_FIELDS });
    });
  }
  if (present(body.mcp_servers)) {
    arrayAt(body.mcp_servers, 'mcp_servers').forEach((raw, i) => {
      const declaration = mcpTool(raw, `mcp_servers.${i}`);
      if (!declaration) return;
      tools.push(declaration);
      origins.push({ path: `mcp_servers.${i}`, fields: MCP_FIELDS });
    });
  }
  return { tools, origins, include, maxToolCalls, ...choice };
}

function domainList(tool: JsonObject, field: 'allowed_domains' | 'blocked_domains', path: string): string[] {
  if (!present(tool[field])) return [];
  return arrayAt(tool[field], `${path}.${field}`).map((d, j) => stringAt(d, `${path}.${field}.${j}`));
}

/**
 * Anthropic's server web search as the gateway's `web_search` tool: the
 * model sees the module's search function, and the reply shows each search
 * as Anthropic does (`server_tool_use` + `web_search_tool_result`).
 * `allowed_domains`, `blocked_domains` (the declaration's `filters`) and
 * `user_location` carry over; `max_uses` becomes the turn's limit on
 * gateway-run calls.
 */
function webSearchTool(tool: JsonObject, path: string, options: ToolMappingOptions): { declaration: JsonObject; maxUses: number | null } {
  if (!options.webSearch) {
    unsupported(
      `${path}.type`,
      `"${String(tool.type)}" runs on this gateway's web search, and no search provider is configured (webSearch.provider); declare a custom tool or use mcp_servers.`,
    );
  }
  if (tool.name !== 'web_search') invalid(`${path}.name`, 'must be "web_search".');
  const declaration: JsonObject = { type: 'web_search' };
  const allowed = domainList(tool, 'allowed_domains', path);
  const blocked = domainList(tool, 'blocked_domains', path);
  // Anthropic takes one list or the other, never both.
  if (allowed.length > 0 && blocked.length > 0) invalid(`${path}.blocked_domains`, 'cannot be used alongside allowed_domains; give one list or the other.');
  if (allowed.length > 0) declaration.filters = { allowed_domains: allowed };
  if (blocked.length > 0) declaration.filters = { blocked_domains: blocked };
  if (present(tool.user_location)) declaration.user_location = objectAt(tool.user_location, `${path}.user_location`);
  const maxUses = present(tool.max_uses) ? numberAt(tool.max_uses, `${path}.max_uses`, 1, Number.MAX_SAFE_INTEGER, { integer: true }) : null;
  return { declaration, maxUses };
}

function isDeferred(raw: unknown, path: string): boolean {
  const tool = raw as JsonObject;
  return present(tool.defer_loading) && booleanAt(tool.defer_loading, `${path}.defer_loading`);
}

/**
 * Tool search (`defer_loading: true`): a deferred tool is not shown to the
 * model until the conversation loads it, as Anthropic's API expands it only
 * then; a client with a large catalog (Claude Code's
 * `DeferredToolPlaceholder`, MCP servers) sends them so that they stay out
 * of the prompt. A tool counts as loaded once a `tool_result` carried a
 * `tool_reference` to it (what a tool search tool answers), once the model
 * called it, or when `tool_choice` names it.
 */
function loadedToolNames(messages: unknown, choice: PublicToolChoice): Set<string> {
  const names = new Set<string>();
  if (typeof choice === 'object' && choice.type === 'function' && typeof choice.name === 'string') names.add(choice.name);
  if (!Array.isArray(messages)) return names;
  for (const message of messages) {
    if (!isObject(message) || !Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (!isObject(block)) continue;
      if (block.type === 'tool_use' && typeof block.name === 'string') names.add(block.name);
      if (block.type !== 'tool_result' || !Array.isArray(block.content)) continue;
      for (const part of block.content) if (isObject(part) && part.type === 'tool_reference' && typeof part.tool_name === 'string') names.add(part.tool_name);
    }
  }
  return names;
}

function functionTool(raw: unknown, path: string): JsonObject {
  const tool = objectAt(raw, path);
  if (present(tool.type) && tool.type !== 'custom') {
    unsupported(`${path}.type`, `"${String(tool.type)}" is an Anthropic server tool; declare a custom tool (name, input_schema) or use mcp_servers.`);
  }
  const schema = objectAt(tool.input_schema, `${path}.input_schema`);
  if (schema.type !== 'object') invalid(`${path}.input_schema.type`, 'must be "object".');
  const declaration: JsonObject = { type: 'function', name: stringAt(tool.name, `${path}.name`, { nonEmpty: true }), parameters: schema };
  if (present(tool.description)) declaration.description = stringAt(tool.description, `${path}.description`);
  if (present(tool.strict)) declaration.strict = booleanAt(tool.strict, `${path}.strict`);
  // cache_control, eager_input_streaming...: Anthropic-side hints with nothing to do here (defer_loading: `mapTools`).
  return declaration;
}

/** Returns null for a server its client switched off (`tool_configuration.enabled: false`). */
function mcpTool(raw: unknown, path: string): JsonObject | null {
  const server = objectAt(raw, path);
  if (server.type !== 'url') invalid(`${path}.type`, 'must be "url".');
  const declaration: JsonObject = {
    type: 'mcp',
    server_label: stringAt(server.name, `${path}.name`, { nonEmpty: true }),
    server_url: stringAt(server.url, `${path}.url`, { nonEmpty: true }),
    // Messages has no approval round trip: the connector runs what the client declared.
    require_approval: 'never',
  };
  if (present(server.authorization_token)) declaration.authorization = stringAt(server.authorization_token, `${path}.authorization_token`);
  if (present(server.tool_configuration)) {
    const config = objectAt(server.tool_configuration, `${path}.tool_configuration`);
    if (present(config.enabled) && booleanAt(config.enabled, `${path}.tool_configuration.enabled`) === false) return null;
    if (present(config.allowed_tools)) {
      const allowed = arrayAt(config.allowed_tools, `${path}.tool_configuration.allowed_tools`);
      declaration.allowed_tools = allowed.map((name, i) => stringAt(name, `${path}.tool_configuration.allowed_tools.${i}`));
    }
  }
  return declaration;
}

function toolChoice(value: unknown): { toolChoice: PublicToolChoice; parallelToolCalls: boolean } {
  if (!present(value)) return { toolChoice: 'auto', parallelToolCalls: true };
  const choice = objectAt(value, 'tool_choice');
  const parallelToolCalls = present(choice.disable_parallel_tool_use) ? !booleanAt(choice.disable_parallel_tool_use, 'tool_choice.disable_parallel_tool_use') : true;
  switch (choice.type) {
    case 'auto':
      return { toolChoice: 'auto', parallelToolCalls };
    case 'any':
      return { toolChoice: 'required', parallelToolCalls };
    case 'none':
      return { toolChoice: 'none', parallelToolCalls };
    case 'tool':
      return { toolChoice: { type: 'function', name: stringAt(choice.name, 'tool_choice.name', { nonEmpty: true }) }, parallelToolCalls };
    default:
      invalid('tool_choice.type', 'must be "auto", "any", "tool" or "none".');
  }
}
