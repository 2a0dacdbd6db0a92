import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength, ValidateNested } from 'class-validator';
import { OPENAI_TOOL_TYPES } from './openai-tool-types.js';

/**
 * An upstream URL is the API's base: the gateway adds `/responses`,
 * `/chat/completions` or `/models` itself, so a URL that already ends in one
 * of them would be asked for `…/chat/completions/responses` and answer 404.
 */
const NOT_AN_ENDPOINT = /^(?!.*\/(chat\/completions|completions|responses|embeddings|models)\/?$)/;
const NOT_AN_ENDPOINT_MESSAGE = (each: boolean) => ({
  each,
  message:
    "must be the server's base URL (ending in /v1), not one of its endpoints: drop the trailing /chat/completions, /responses or /models (the dialect is chosen by UPSTREAM_DIALECT)",
});

export class UpstreamConfig {
  /** Base URL including `/v1`; vLLM's default. With several replicas, the first of `baseUrls`. */
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  @Matches(NOT_AN_ENDPOINT, NOT_AN_ENDPOINT_MESSAGE(false))
  baseUrl = 'http://127.0.0.1:8000/v1';

  /**
   * Several model servers (replicas of one model, or servers of different
   * models, routed by `model`): `UPSTREAM_URL` may list them comma-separated.
   * Unset or one entry: `baseUrl` alone.
   */
  @IsOptional()
  @IsArray()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true }, { each: true })
  @Matches(NOT_AN_ENDPOINT, NOT_AN_ENDPOINT_MESSAGE(true))
  baseUrls?: string[];

  /** With several replicas: how often each is probed (`GET /models`), and the backoff ceiling of one that failed. */
  @IsInt()
  @Min(50)
  healthCheckMs = 5_000;

  @IsIn(['responses', 'chat'])
  dialect: 'responses' | 'chat' = 'responses';

  @IsOptional()
  @IsString()
  apiKey?: string;

  /**
   * Chat dialect: where the images of a tool's output go. `user-message`: a
   * user message after the tool messages, saying whose output they are (what
   * every vision chat template reads); `tool-message`: content parts of the
   * tool message, for servers whose templates render images there.
   */
  @IsIn(['user-message', 'tool-message'])
  chatToolOutputMedia: 'user-message' | 'tool-message' = 'user-message';

  /** Model used when a request names none. */
  @IsOptional()
  @IsString()
  defaultModel?: string;

  /** Keep-alive sockets per upstream origin. */
  @IsInt()
  @Min(1)
  maxSockets = 256;

  /**
   * Inbound request headers passed on to the upstream, by name (e.g.
   * `x-tenant`). Nothing is forwarded unless the operator names it: inbound
   * headers carry the client's credentials.
   */
  @IsArray()
  @Matches(/^(?!(host|connection|keep-alive|content-length|transfer-encoding|te|trailer|upgrade|expect|proxy-connection)$)[!#$%&'*+.^_`|~0-9a-z-]+$/i, {
    each: true,
    message: 'each entry must be a header name, and not one the transport manages (host, connection, content-length, transfer-encoding, ...)',
  })
  forwardHeaders: string[] = [];
}

export class TimeoutConfig {
  @IsInt() @Min(1) connectMs = 5_000;
  @IsInt() @Min(1) firstByteMs = 120_000;
  /** Longest silence between two stream chunks. */
  @IsInt() @Min(1) idleMs = 60_000;
  @IsInt() @Min(1) totalMs = 600_000;
}

/** Where the gateway writes (relative to the working directory) unless `server.dataDir` says otherwise. */
export const DEFAULT_DATA_DIR = '.switchyard';

export class ServerConfig {
  /**
   * The address to listen on. Unset: `127.0.0.1` when no credential is
   * configured (no `auth.apiKeys`, no `auth.oidc`), `0.0.0.0` when one is, so
   * that a fresh install is reachable from this host only (`listenHost`).
   */
  @IsOptional() @IsString() host!: string;
  /**
   * Keep the tools that run code (`code_interpreter`) on while listening
   * beyond loopback without credentials. Off: such a gateway starts with them
   * turned off and says so in one warning line (`codeExecutionRefusal`).
   */
  @IsBoolean() allowUnauthenticatedCode = false;
  @IsInt() @Min(0) @Max(65535) port = 8080;
  /** Largest accepted request body, in bytes. */
  @IsInt() @Min(1024) bodyLimitBytes = 16 * 1024 * 1024;
  /** SSE comment sent when nothing else was written for this long. */
  @IsInt() @Min(100) keepAliveMs = 15_000;
  /**
   * Reasoning text event names: the OpenAI SDK's `response.reasoning_text.*`
   * (what Codex CLI and the SDKs consume), the Open Responses spec's
   * `response.reasoning.*`, or `auto`: per HTTP request, the OpenAI SDKs'
   * and Codex's names for them (by `User-Agent` / `x-stainless-lang`), the
   * spec's for every other client; the WebSocket and broker transports keep
   * the OpenAI SDK's names.
   */
  @IsIn(['auto', 'openai', 'openresponses']) reasoningEvents: 'auto' | 'openai' | 'openresponses' = 'auto';
  /** `event`: each SSE event its own HTTP chunk, a tick's chunks sent in one socket write; `tick`: a tick's events joined into one chunk. */
  @IsIn(['event', 'tick']) sseWrites: 'event' | 'tick' = 'event';
  /**
   * On SIGTERM the host stops taking connections and lets open requests and
   * streams finish for this long before it closes them (a Kubernetes pod's
   * `terminationGracePeriodSeconds` should exceed it).
   */
  @IsInt() @Min(0) shutdownGraceMs = 30_000;
  /** Gateway processes sharing the port (`apps/gateway` only); unset: one per core. */
  @IsOptional() @IsInt() @Min(1) @Max(256) workers?: number;
  /**
   * The one directory the gateway writes to (`SWITCHYARD_DATA_DIR`): the
   * SQLite files and the code-interpreter containers default to paths under
   * it. A container image makes it its only writable volume.
   */
  @IsString() dataDir = DEFAULT_DATA_DIR;
  /**
   * The key of owner ids (`OWNER_ID_SECRET`): an API key's owner id is its
   * HMAC-SHA256 under this secret. Unset: generated once into
   * `<dataDir>/owner-id.secret` (mode 0600), which the workers share;
   * replicas that do not share the data directory must be given one value.
   */
  @IsOptional() @IsString() @MinLength(32) ownerIdSecret?: string;
}

export class ToolsConfig {
  /** Sliding window of concurrently running gateway calls per request. */
  @IsInt() @Min(1) @Max(1024) maxConcurrentGatewayCalls = 5;
  /** Default per-call deadline. */
  @IsInt() @Min(1) defaultTimeoutMs = 60_000;
  /** Per-tool-type deadline overrides, e.g. `{ "mcp": 120000 }`. */
  @IsObject() timeoutMsByType: Record<string, number> = {};
  /** Inference rounds per request before the response ends `incomplete`. */
  @IsInt() @Min(1) @Max(1000) maxRounds = 10;
  /**
   * Model-visible tools per request (declarations, namespace members and
   * discovered MCP tools together). OpenAI allows 128 functions; the bound is
   * higher for MCP servers with many tools, and keeps one request's
   * preparation work small next to everyone else's.
   */
  @IsInt() @Min(1) @Max(100_000) maxToolsPerRequest = 512;
  /**
   * Gateway tool calls (MCP, web search) one request may run across all its
   * rounds; past it the calls get an error result and the model must answer.
   */
  @IsInt() @Min(1) maxGatewayCallsPerRequest = 256;
  /**
   * A declared tool type that no loaded module handles: `refuse` (the
   * default) answers 400 naming the type, so that a tool module left out of
   * `imports`, or a plugin that failed to load, is never a tool silently
   * dropped from the request; `skip` leaves it out and logs it (newer clients
   * declaring types this gateway does not know yet), except the types of
   * `refuseUnhandledTypes`.
   */
  @IsIn(['refuse', 'skip']) unhandledTypes: 'refuse' | 'skip' = 'refuse';
  /**
   * With `unhandledTypes: skip`: the types still refused with a 400 when no
   * loaded module handles them (OpenAI's own, by default). `[]` skips them all.
   */
  @IsArray() @IsString({ each: true }) refuseUnhandledTypes: string[] = [...OPENAI_TOOL_TYPES];
  /**
   * Prepared tool lists kept across requests, keyed by owner and content: an
   * agent sends the same declarations every turn, and the cache spares
   * validating and normalizing them again. Only types whose handler marks its
   * declarations cacheable are kept (no discovery, nothing per request), and
   * lists that also discover states their handler keeps (`keptDiscovery`),
   * per kept state. 0 disables the cache.
   */
  @IsInt() @Min(0) @Max(1_000_000) declarationCacheEntries = 256;
  /** The most the kept tool lists may hold, estimated from their JSON text; 0 disables the cache. */
  @IsInt() @Min(0) declarationCacheBytes = 32 * 1024 * 1024;
}

export class GatewayConfig {
  @ValidateNested() @Type(() => UpstreamConfig) upstream = new UpstreamConfig();
  @ValidateNested() @Type(() => TimeoutConfig) timeouts = new TimeoutConfig();
  @ValidateNested() @Type(() => ServerConfig) server = new ServerConfig();
  @ValidateNested() @Type(() => ToolsConfig) tools = new ToolsConfig();
  /**
   * Plugins the `switchyard` command loads at boot (`SWITCHYARD_PLUGINS`,
   * `--plugin`): installed package names, or paths to files, each exporting
   * tool modules (see `definePlugin`).
   */
  @IsArray() @IsString({ each: true }) plugins: string[] = [];
  /**
   * Sections owned by modules (`mcp`, `state`, `limits`, `storage`,
   * `observability`, `transports`, `auth`, ...): each module
   * declares its own (`ConfigSection`) and validates it; core never reads them.
   */
  [section: string]: unknown;
}

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
