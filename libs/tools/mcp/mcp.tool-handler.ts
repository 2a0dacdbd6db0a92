import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  type DiscoveryContext,
  type DiscoveryResult,
  freezeJson,
  type FunctionToolDef,
  type HistoryContext,
  InvalidRequestError,
  type JsonObject,
  type ModelItem,
  modelVisibleName,
  type NormalizedTool,
  type PublicItem,
  redactUrl,
  type TakenNames,
  type ToolChoiceContext,
  type ToolChoiceContract,
  type ToolChoiceTarget,
  type ToolHandler,
  ToolHandlerProvider,
  type ToolStatus,
  RequestLocal,
} from '#tool-sdk/index.js';
import { McpApprovalResolver } from './mcp-approval.resolver.js';
import { CREDENTIALS_WITHHELD } from './mcp-declaration.parser.js';
import { MCP_SETTINGS, type McpSettings } from './mcp.config.js';
import { McpConnectError, McpConnectionLostError, McpConnectionPool } from './mcp-connection-pool.service.js';
import { mcpFailureDetail, mcpFailureMessage, mcpFailureVerdict } from './mcp-failure.js';
import { loadedMcpSdk } from './mcp-sdk.js';
import { filterAdmits, parseMcpDeclaration, type ApprovalPolicy, type McpDeclaration } from './mcp-declaration.parser.js';
import { RefusedDestinationError } from './mcp-host.policy.js';
import { listToolsItem } from './mcp-items.js';
import type { McpTarget } from './mcp-target.js';
import { MCP } from './mcp.tool-type.js';

/** What the executor needs for one discovered tool. Never echoed: the target holds credentials. */
export interface McpExecutionParams {
  target: McpTarget;
  serverLabel: string;
  /** The tool's own name on the server. */
  toolName: string;
  approval: ApprovalPolicy;
  readOnlyHint: boolean;
  /** The tool's `outputSchema` as its listing gave it: a call's structured result is checked against it. */
  outputSchema?: Tool['outputSchema'];
  /** The tool runs only as a task (`execution.taskSupport: "required"`), which the SDK's client refuses to call directly. */
  taskRequired?: boolean;
}

export interface McpDiscovery {
  tools: Tool[];
  error: string | null;
  /**
   * The server as this request's owner reaches it (`McpTarget.forOwner`):
   * what its tools' calls use. Carried here rather than written back into
   * the declaration's params, which may serve many requests.
   */
  target: McpTarget;
  /** True when `tools` is the connection's kept listing, shared by every request it serves (see `keptDiscovery`). */
  kept: boolean;
}

/** The servers one request's declarations claimed so far, shared by all of them through the request context. */
const REQUEST_CLAIMS = new RequestLocal<RequestClaims>('mcp.claims', () => ({ count: 0, labels: new Map() }));

/** Per-request bookkeeping across declarations (see `claim`). */
interface RequestClaims {
  count: number;
  labels: Map<string, string>;
}

/** A safety net against servers whose cursors never end. */
const MAX_LIST_PAGES = 1000;

/** The model-visible name of an MCP tool when the request does not (or no longer) declare it. */
export function mcpModelName(serverLabel: string, toolName: string): string {
  return modelVisibleName([serverLabel, toolName], new Set());
}

/**
 * Whether `redactUrl` could change `url`: only a URL with user info, a query or
 * a fragment has anything to hide, and each needs its `@`, `?` or `#` in the
 * text. Asked first because parsing the URL is most of what echoing a
 * declaration costs, on every request that declares a server.
 */
function mayCarrySecrets(url: string): boolean {
  return url.includes('@') || url.includes('?') || url.includes('#');
}

/** The listing cache's key within a connection: what was dropped for one declaration may be offered to another. */
function listingFilter(params: McpDeclaration): string {
  return JSON.stringify(params.allowedTools ?? null);
}

/**
 * `tool_choice: {type: "mcp", server_label, name?}`: one tool of a server, or
 * any of its tools when `name` is absent.
 */
export const mcpToolChoice: ToolChoiceContract = {
  types: [MCP],
  resolve(choice: JsonObject, ctx: ToolChoiceContext): ToolChoiceTarget {
    const label = String(choice.server_label ?? '');
    const name = choice.name;
    const onServer = ctx.entries.filter((e) => e.toolType === MCP && e.scope === label && e.offered);
    if (onServer.length === 0) throw new InvalidRequestError(`tool_choice names MCP server "${label}", which offers no tools in this request.`, 'tool_choice.server_label');
    if (typeof name === 'string') {
      const entry = onServer.find((e) => e.toolName === name);
      if (!entry) throw new InvalidRequestError(`MCP server "${label}" has no tool "${name}".`, 'tool_choice.name');
      return { force: entry.modelName };
    }
    return { anyOf: onServer.map((e) => e.modelName) };
  },
};

/**
 * `mcp`: tools of a remote or operator-configured MCP server, discovered with
 * `tools/list` at request start and executed by the gateway (see
 * `McpGatewayExecutor`). Each server tool becomes one function for the model,
 * named `<server_label>__<tool>` (shortened with a hash past 64 characters).
 */
@Injectable()
@ToolHandlerProvider({ type: MCP })
export class McpToolHandler implements ToolHandler<McpDeclaration, McpDiscovery, McpExecutionParams> {
  readonly type = MCP;
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['mcp_list_tools', 'mcp_call', 'mcp_approval_request'];
  readonly itemIdPrefix = 'mcp';
  /** Tool names come from the server's `tools/list`, not from a `name` field of the declaration. */
  readonly namesFromDiscovery = true;
  readonly toolChoice = mcpToolChoice;
  /** `mcp_approval_response` items: claimed with the history item types, answered before the first round. */
  readonly approvals = new McpApprovalResolver();
  private readonly logger = new Logger('McpToolHandler');

  constructor(
    private readonly pool: McpConnectionPool,
    @Inject(MCP_SETTINGS) private readonly settings: McpSettings,
  ) {}

  describe(): ToolStatus {
    const { servers, allowedHosts } = this.settings;
    return { runs: true, detail: `runs in the gateway: ${servers.length} operator server(s); request server_url allowed for ${allowedHosts.length} host(s) (mcp.allowedHosts)` };
  }

  validate(declaration: JsonObject, path: string): McpDeclaration {
    return parseMcpDeclaration(declaration, path, this.pool);
  }

  publicDeclaration(_params: McpDeclaration, declaration: JsonObject): JsonObject {
    const { headers: _headers, authorization: _authorization, ...rest } = declaration;
    // A query string is as secret as a header (`?token=...`): its values are never echoed or stored.
    if (typeof rest.server_url === 'string' && mayCarrySecrets(rest.server_url)) rest.server_url = redactUrl(rest.server_url);
    return rest;
  }

  /**
   * Credentials are not stored, so a continuation that inherits this
   * declaration could only call the server without them, i.e. as someone
   * else. The mark makes such a continuation a 400 asking for the tools again.
   */
  continuationDeclaration(params: McpDeclaration, declaration: JsonObject): JsonObject {
    const stored = this.publicDeclaration(params, declaration);
    if (params.target.kind === 'remote' && params.target.carriesCredentials()) stored[CREDENTIALS_WITHHELD] = true;
    return stored;
  }

  async discover(params: McpDeclaration, ctx: DiscoveryContext): Promise<DiscoveryResult<McpDiscovery>> {
    // Request-declared servers get a connection per owner: one tenant's calls
    // (and their failures) never share a session with another tenant's.
    const target = params.target.forOwner(ctx.owner ?? null);
    const claims = this.claim(params, ctx.request.local(REQUEST_CLAIMS));
    // Core starts every declaration's discovery before awaiting any, so after
    // one tick the count covers the whole request: refuse before connecting.
    await Promise.resolve();
    if (claims.count > this.settings.maxServersPerRequest) {
      throw new InvalidRequestError(
        `tools declares ${claims.count} MCP servers; this gateway allows at most ${this.settings.maxServersPerRequest} per request (mcp.maxServersPerRequest).`,
        'tools',
        'too_many_mcp_servers',
      );
    }

    const listed = ctx.history.some((item) => item.type === 'mcp_list_tools' && item.server_label === params.serverLabel && !item.error);
    const filter = listingFilter(params);
    // A kept listing needs no exchange, so neither the deadline nor the connection's signals.
    const kept = this.pool.keptListing(target, filter);
    const discovery: McpDiscovery = kept ? { tools: kept, error: null, target, kept: true } : await this.listOverConnection(params, target, filter, ctx.signal);
    // A failed listing is always reported; a successful one once per conversation.
    const items = discovery.error !== null || !listed ? [listToolsItem(params.serverLabel, discovery.tools, discovery.error)] : [];
    return { state: discovery, items };
  }

  /**
   * The identity of a listing served from the connection's kept one: the
   * kept array itself, which a refresh or a retired connection replaces.
   * A listing made for this request, or one that failed, is its own.
   */
  keptDiscovery(state: McpDiscovery): object | undefined {
    return state.kept && state.error === null ? state.tools : undefined;
  }

  /** The server's listing over the owner's pooled connection, under the discovery deadline; a failure is the discovery's error. */
  private async listOverConnection(params: McpDeclaration, target: McpTarget, filter: string, requestSignal: AbortSignal): Promise<McpDiscovery> {
    const timeout = AbortSignal.timeout(this.settings.discoveryTimeoutMs);
    const signal = AbortSignal.any([requestSignal, timeout]);
    try {
      const tools = await this.pool.use(target, signal, (client, s) => this.cachedListTools(client, s, params, filter), { retryStale: true });
      return { tools, error: null, target, kept: false };
    } catch (err) {
      if (err instanceof RefusedDestinationError) throw new InvalidRequestError(err.message, `${params.path}.server_url`, err.code).withDetail(err.detail ?? err.message);
      if (requestSignal.aborted) throw err;
      // A server that does not answer tools/list in time is not worth keeping a connection to.
      if (timeout.aborted) this.pool.discard(target, 'tools/list timed out');
      const { message, detail } = timeout.aborted
        ? { message: mcpFailureMessage(target, 'unreachable'), detail: `no tools/list answer within ${this.settings.discoveryTimeoutMs} ms` }
        : describeFailure(err, target);
      // The tenant's item says unreachable / not an MCP server; the log keeps where and what the transport said.
      this.logger.warn(`discovery failed for ${target.describe()}: ${detail}`);
      return { tools: [], error: message, target, kept: false };
    }
  }

  normalize(params: McpDeclaration, discovered: McpDiscovery | undefined, ctx: { takenNames: ReadonlySet<string> }): NormalizedTool<McpExecutionParams>[] {
    // Names this server's tools take, checked together with the request's:
    // copying the request's set per server would cost O(tools²).
    const own = new Set<string>();
    const taken: TakenNames = { has: (name) => own.has(name) || ctx.takenNames.has(name) };
    const context = params.serverDescription ?? params.target.operator?.description;
    // The owner's target from discovery: calls go over that owner's connection.
    const target = discovered?.target ?? params.target;
    const tools = discovered?.tools ?? [];
    const kept = Object.isFrozen(tools) ? keptFunctions(tools, params.serverLabel, context) : undefined;
    return tools.map((tool, i): NormalizedTool<McpExecutionParams> => {
      const name = modelVisibleName([params.serverLabel, tool.name], taken);
      own.add(name);
      const executionParams: McpExecutionParams = {
        target,
        serverLabel: params.serverLabel,
        toolName: tool.name,
        approval: params.approval,
        readOnlyHint: tool.annotations?.readOnlyHint === true,
        outputSchema: tool.outputSchema,
        taskRequired: tool.execution?.taskSupport === 'required',
      };
      return {
        // The kept listing's shared function when this request names the tool as it did.
        fn: kept?.[i].name === name ? kept[i] : functionFor(tool, name, params.serverLabel, context),
        scope: params.serverLabel,
        toolName: tool.name,
        executionParams,
      };
    });
  }

  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    const label = String(it.server_label ?? '');
    const toolName = String(it.name ?? '');
    const callId = String(it.id ?? '');
    const args = typeof it.arguments === 'string' ? it.arguments : JSON.stringify(it.arguments ?? {});
    const name = ctx.modelNameFor(toolName, label) ?? mcpModelName(label, toolName);
    switch (item.type) {
      case 'mcp_call': {
        const output = typeof it.output === 'string' ? it.output : it.error != null ? `Error: ${typeof it.error === 'string' ? it.error : JSON.stringify(it.error)}` : '';
        // An approved call: the model's call is its mcp_approval_request (keyed by
        // that id), so this item only completes it. The approval resolver does
        // not run it again once such an mcp_call is in the conversation.
        if (typeof it.approval_request_id === 'string' && it.approval_request_id.length > 0) {
          return [{ type: 'function_call_output', call_id: it.approval_request_id, output }];
        }
        return [
          { type: 'function_call', call_id: callId, name, arguments: args },
          { type: 'function_call_output', call_id: callId, output },
        ];
      }
      case 'mcp_approval_request':
        // Its output comes from the matching mcp_approval_response (see McpApprovalResolver).
        return [{ type: 'function_call', call_id: callId, name, arguments: args }];
      default:
        // mcp_list_tools: the model sees the tools themselves, not the listing.
        return [];
    }
  }

  private claim(params: McpDeclaration, claims: RequestClaims): RequestClaims {
    const first = claims.labels.get(params.serverLabel);
    if (first !== undefined) {
      // Approvals and listings are matched by label: two servers under one would be ambiguous.
      throw new InvalidRequestError(
        `${params.path}.server_label "${params.serverLabel}" is already used by ${first}; each MCP server in a request needs its own label.`,
        `${params.path}.server_label`,
        'duplicate_server_label',
      );
    }
    claims.labels.set(params.serverLabel, params.path);
    claims.count++;
    return claims;
  }

  /** `listTools`, answered from the connection's listing while `McpToolListCache` may keep it. */
  private async cachedListTools(client: Client, signal: AbortSignal, params: McpDeclaration, filter: string): Promise<Tool[]> {
    const cache = this.pool.toolLists;
    // Again on the connection: another request's listing may have been kept while this one waited for it.
    const cached = cache.get(client, filter);
    if (cached) return cached;
    // Taken before listing: a notification stream that ends meanwhile must not vouch for this answer.
    const keeps = cache.keeps(client);
    if (!keeps) return this.listTools(client, signal, params);
    const generation = cache.generation(client);
    const tools = await this.listTools(client, signal, params);
    cache.set(client, filter, tools, generation, keeps.watch);
    return tools;
  }

  /** All pages of `tools/list`, filtered by `allowed_tools` and capped at `maxToolsPerServer`. */
  private async listTools(client: Client, signal: AbortSignal, params: McpDeclaration): Promise<Tool[]> {
    const max = this.settings.maxToolsPerServer;
    const tools: Tool[] = [];
    const names = new Set<string>();
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await onePage(signal, (pageSignal) =>
        client.listTools(cursor === undefined ? {} : { cursor }, { signal: pageSignal, timeout: this.settings.discoveryTimeoutMs }),
      );
      for (const tool of result.tools) {
        // A name listed twice would route calls ambiguously: the first listing wins.
        if (names.has(tool.name)) continue;
        if (params.allowedTools && !filterAdmits(params.allowedTools, tool.name, tool.annotations?.readOnlyHint === true)) continue;
        if (tools.length >= max) {
          this.logger.warn(`MCP server ${params.target.describe()} offers more than ${max} tools; the rest are not offered (mcp.maxToolsPerServer).`);
          return tools;
        }
        tools.push(tool);
        names.add(tool.name);
      }
      cursor = result.nextCursor;
      if (cursor === undefined || seenCursors.has(cursor)) break;
      seenCursors.add(cursor);
    }
    return tools;
  }
}

/** The function the model is offered for a server's tool, under `name`. */
function functionFor(tool: Tool, name: string, serverLabel: string, context: string | undefined): FunctionToolDef {
  const ownDescription = tool.description ?? tool.title ?? tool.annotations?.title ?? '';
  const description = context ? `[MCP server ${serverLabel}: ${context}] ${ownDescription}`.trim() : ownDescription || null;
  return { type: 'function', name, description, parameters: tool.inputSchema as JsonObject, strict: false };
}

/**
 * Per kept (frozen) listing, per server label and description, its functions,
 * frozen and shared by every request the listing serves: the upstream writer
 * then keeps each one's wire form and JSON text (`mapFrozenOnce`) instead of
 * serializing every input schema in every model request. Named as a request
 * with no other tools names them; a request whose names differ (another
 * declaration took one) gets functions of its own for those.
 */
const listingFunctions = new WeakMap<readonly Tool[], Map<string, readonly FunctionToolDef[]>>();
const KEPT_NAMINGS_PER_LISTING = 16;

function keptFunctions(tools: readonly Tool[], serverLabel: string, context: string | undefined): readonly FunctionToolDef[] | undefined {
  let byServer = listingFunctions.get(tools);
  if (!byServer) {
    byServer = new Map();
    listingFunctions.set(tools, byServer);
  }
  const key = JSON.stringify([serverLabel, context ?? null]);
  let functions = byServer.get(key);
  // Labels and descriptions come from requests: past a few per listing, new ones are not kept (a tenant
  // varying them per request would otherwise grow this map for as long as the listing is kept).
  if (!functions && byServer.size >= KEPT_NAMINGS_PER_LISTING) return undefined;
  if (!functions) {
    const own = new Set<string>();
    functions = freezeJson(
      tools.map((tool) => {
        const name = modelVisibleName([serverLabel, tool.name], own);
        own.add(name);
        return functionFor(tool, name, serverLabel, context);
      }),
    );
    byServer.set(key, functions);
  }
  return functions;
}

/**
 * One request of the listing under a signal of its own, unlinked from the
 * listing's once answered. The SDK adds an abort listener to the signal it
 * is given for each request and never removes it: on one shared signal a
 * listing of many pages piled up a listener per page, and an abort then sent
 * the server a `notifications/cancelled` for every page already answered.
 */
async function onePage<T>(signal: AbortSignal, request: (pageSignal: AbortSignal) => Promise<T>): Promise<T> {
  const page = new AbortController();
  const forward = () => page.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  try {
    return await request(page.signal);
  } finally {
    signal.removeEventListener('abort', forward);
  }
}

/**
 * A discovery failure as the client may see it (no stack, no credentials, no
 * address, no transport detail) and as the log keeps it. A JSON-RPC error
 * the server itself answered is the server's own words and stays.
 */
export function describeFailure(err: unknown, target: McpTarget): { message: string; detail: string } {
  if (err instanceof McpConnectError) return { message: err.message, detail: err.detail ?? err.message };
  if (err instanceof McpConnectionLostError) return { message: err.message, detail: mcpFailureDetail(target, err) };
  const sdk = loadedMcpSdk();
  const verdict = mcpFailureVerdict(err);
  if (sdk && err instanceof sdk.McpError && verdict === 'not_mcp') {
    return { message: target.redact(`MCP server ${target.publicName()} refused to list its tools: ${err.message}`), detail: mcpFailureDetail(target, err) };
  }
  return { message: mcpFailureMessage(target, verdict), detail: mcpFailureDetail(target, err) };
}
