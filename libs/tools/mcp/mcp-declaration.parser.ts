import { InvalidRequestError, type JsonObject, optionalObject, optionalString, requireString } from '#tool-sdk/index.js';
import { SERVER_LABEL } from './mcp.config.js';
import type { McpConnectionPool } from './mcp-connection-pool.service.js';
import { RefusedDestinationError } from './mcp-host.policy.js';
import { McpTarget } from './mcp-target.js';

/** A tool filter as `allowed_tools` and `require_approval` spell it: `{tool_names, read_only}`. */
export interface ToolFilter {
  names?: ReadonlySet<string>;
  /** Only tools whose annotations say `readOnlyHint: true`. */
  readOnly?: boolean;
}

/**
 * `require_approval`. Tools named in neither list fall back to `fallback`,
 * which is `always` unless the client said `never`: like OpenAI, a call the
 * client has not explicitly cleared waits for its approval.
 */
export interface ApprovalPolicy {
  fallback: 'always' | 'never';
  always?: ToolFilter;
  never?: ToolFilter;
}

/** A validated `mcp` declaration. */
export interface McpDeclaration {
  path: string;
  serverLabel: string;
  serverDescription?: string;
  target: McpTarget;
  allowedTools?: ToolFilter;
  approval: ApprovalPolicy;
}

// Header names are HTTP tokens; values must not be able to start another header line.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[^\r\n\0]*$/;
/** Headers the transports own: letting a client set them would break framing or session handling. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade', 'te', 'mcp-session-id', 'mcp-protocol-version']);

function fail(message: string, param: string, code = 'invalid_request'): never {
  throw new InvalidRequestError(message, param, code);
}

function parseFilter(value: unknown, param: string, what: string): ToolFilter {
  if (Array.isArray(value)) {
    if (value.some((v) => typeof v !== 'string')) fail(`${param} must be an array of tool names (strings).`, param);
    return { names: new Set(value as string[]) };
  }
  if (!value || typeof value !== 'object') fail(`${param} must be ${what}.`, param);
  const obj = value as JsonObject;
  for (const key of Object.keys(obj)) {
    if (key !== 'tool_names' && key !== 'read_only') fail(`${param}.${key} is not a known field; use tool_names and read_only.`, `${param}.${key}`);
  }
  const filter: ToolFilter = {};
  if (obj.tool_names !== undefined && obj.tool_names !== null) {
    if (!Array.isArray(obj.tool_names) || obj.tool_names.some((v) => typeof v !== 'string')) {
      fail(`${param}.tool_names must be an array of strings.`, `${param}.tool_names`);
    }
    filter.names = new Set(obj.tool_names as string[]);
  }
  if (obj.read_only !== undefined && obj.read_only !== null) {
    if (typeof obj.read_only !== 'boolean') fail(`${param}.read_only must be a boolean.`, `${param}.read_only`);
    filter.readOnly = obj.read_only;
  }
  return filter;
}

function parseApproval(value: unknown, param: string): ApprovalPolicy {
  if (value === undefined || value === null || value === 'always') return { fallback: 'always' };
  if (value === 'never') return { fallback: 'never' };
  if (typeof value === 'string') fail(`${param} must be "always", "never" or {always: {...}, never: {...}}.`, param);
  if (typeof value !== 'object' || Array.isArray(value)) fail(`${param} must be "always", "never" or {always: {...}, never: {...}}.`, param);
  const obj = value as JsonObject;
  for (const key of Object.keys(obj)) {
    if (key !== 'always' && key !== 'never') fail(`${param}.${key} is not a known field; use always and never.`, `${param}.${key}`);
  }
  const policy: ApprovalPolicy = { fallback: 'always' };
  if (obj.always !== undefined && obj.always !== null) policy.always = parseFilter(obj.always, `${param}.always`, 'an object {tool_names, read_only}');
  if (obj.never !== undefined && obj.never !== null) policy.never = parseFilter(obj.never, `${param}.never`, 'an object {tool_names, read_only}');
  return policy;
}

/**
 * Marks a stored declaration whose credentials were withheld from storage
 * (see `McpToolHandler.continuationDeclaration`); never part of a client's own.
 */
export const CREDENTIALS_WITHHELD = 'credentials_withheld';

function parseHeaders(decl: JsonObject, path: string): Record<string, string> {
  const headers = optionalObject(decl, 'headers', path) ?? {};
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    // Messages name the header, never its value: values are credentials.
    const param = `${path}.headers.${name}`;
    if (!HEADER_NAME.test(name)) fail(`${path}.headers has a header name that is not a valid HTTP token.`, `${path}.headers`);
    if (typeof value !== 'string') fail(`${param} must be a string.`, param);
    if (!HEADER_VALUE.test(value)) fail(`${param} must not contain line breaks or NUL characters.`, param);
    if (RESERVED_HEADERS.has(name.toLowerCase())) fail(`${param} is set by the gateway and cannot be overridden.`, param);
    out[name] = value;
  }
  return out;
}

function parseAuthorization(decl: JsonObject, path: string): string | undefined {
  const value = optionalString(decl, 'authorization', path);
  if (value === undefined) return undefined;
  const param = `${path}.authorization`;
  if (!HEADER_VALUE.test(value)) fail(`${param} must not contain line breaks or NUL characters.`, param);
  // The field is the token itself; tolerate clients that send the whole header value.
  const token = value.replace(/^bearer\s+/i, '').trim();
  if (token.length === 0) fail(`${param} must be a non-empty access token.`, param);
  return token;
}

function parseServerUrl(value: string, param: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(`${param} must be an absolute http(s) URL.`, param);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(`${param} must use http or https.`, param);
  if (url.username || url.password) {
    fail(`${param} must not carry credentials; send them in headers or authorization, which are never echoed.`, param);
  }
  // Only a URL with a fragment has one to drop (the setter re-serializes the URL even when it has none).
  if (value.includes('#')) url.hash = '';
  return url;
}

/**
 * Stage 1 for one `mcp` declaration: shape, policy and the server it names.
 * Request-declared URLs are checked against `mcp.allowedHosts` here, before
 * any I/O; what their host names resolve to is checked at connect time.
 */
export function parseMcpDeclaration(decl: JsonObject, path: string, pool: McpConnectionPool): McpDeclaration {
  if (decl[CREDENTIALS_WITHHELD] === true) {
    fail(
      `${path}: the MCP server "${String(decl.server_label)}" was declared with credentials, which this gateway does not store; send 'tools' again with them to continue.`,
      'tools',
      'mcp_credentials_required',
    );
  }
  if (decl.connector_id !== undefined && decl.connector_id !== null) {
    fail(
      `${path}.connector_id: OpenAI connectors are not supported by this gateway; declare the MCP server with server_url or use an operator-configured server_label.`,
      `${path}.connector_id`,
      'unsupported_parameter',
    );
  }
  const serverLabel = requireString(decl, 'server_label', path);
  if (!SERVER_LABEL.test(serverLabel)) fail(`${path}.server_label must match ^[a-zA-Z0-9_-]+$.`, `${path}.server_label`);
  const serverUrl = optionalString(decl, 'server_url', path);
  const serverDescription = optionalString(decl, 'server_description', path);
  const headers = parseHeaders(decl, path);
  const token = parseAuthorization(decl, path);
  const allowedTools =
    decl.allowed_tools === undefined || decl.allowed_tools === null
      ? undefined
      : parseFilter(decl.allowed_tools, `${path}.allowed_tools`, 'an array of tool names or an object {tool_names, read_only}');
  const approval = parseApproval(decl.require_approval, `${path}.require_approval`);

  const operator = pool.operatorTarget(serverLabel);
  let target: McpTarget;
  if (serverUrl === undefined || serverUrl === '') {
    if (!operator) {
      fail(`${path}.server_url is required: no MCP server labelled "${serverLabel}" is configured on this gateway.`, `${path}.server_url`, 'missing_required_parameter');
    }
    // Operator servers are pooled across requests under the operator's own
    // credentials; per-request ones would need a connection of their own.
    if (Object.keys(headers).length > 0) fail(`${path}.headers cannot be set for the operator-configured server "${serverLabel}".`, `${path}.headers`);
    if (token !== undefined) fail(`${path}.authorization cannot be set for the operator-configured server "${serverLabel}".`, `${path}.authorization`);
    target = operator;
  } else {
    if (operator) {
      fail(`${path}.server_url: "${serverLabel}" is the label of an operator-configured server; omit server_url to use it, or choose another server_label.`, `${path}.server_url`);
    }
    const url = parseServerUrl(serverUrl, `${path}.server_url`);
    try {
      pool.hostPolicy.vet(url);
    } catch (err) {
      if (err instanceof RefusedDestinationError) fail(err.message, `${path}.server_url`, err.code);
      throw err;
    }
    const sent = { ...headers };
    if (token !== undefined) {
      for (const name of Object.keys(sent)) if (name.toLowerCase() === 'authorization') delete sent[name];
      sent.Authorization = `Bearer ${token}`;
    }
    target = McpTarget.remote(serverLabel, url, sent);
  }
  return { path, serverLabel, serverDescription, target, allowedTools, approval };
}

/** Does `filter` admit the tool? An empty filter admits everything. */
export function filterAdmits(filter: ToolFilter, name: string, readOnlyHint: boolean): boolean {
  if (filter.names && !filter.names.has(name)) return false;
  if (filter.readOnly && !readOnlyHint) return false;
  return true;
}

/** Does an approval-list filter name the tool? One without criteria names none. */
function filterNames(filter: ToolFilter | undefined, name: string, readOnlyHint: boolean): boolean {
  if (!filter || (filter.names === undefined && !filter.readOnly)) return false;
  return filterAdmits(filter, name, readOnlyHint);
}

export function needsApproval(policy: ApprovalPolicy, name: string, readOnlyHint: boolean): boolean {
  // A tool both lists name waits for approval: the cautious reading of a contradiction.
  if (filterNames(policy.always, name, readOnlyHint)) return true;
  if (filterNames(policy.never, name, readOnlyHint)) return false;
  return policy.fallback === 'always';
}
