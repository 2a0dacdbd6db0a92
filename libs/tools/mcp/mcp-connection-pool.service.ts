import http from 'node:http';
import https from 'node:https';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { MCP_SETTINGS, type McpSettings } from './mcp.config.js';
import { createGuardedFetch, guardedLookup, systemResolve } from './mcp-guarded.fetch.js';
import { mcpFailureDetail, mcpFailureMessage, mcpFailureVerdict } from './mcp-failure.js';
import { McpHttpTransport } from './mcp-http.transport.js';
import { HostPolicy, RefusedDestinationError, type HostMatch } from './mcp-host.policy.js';
import { CompiledSchemaCache } from './mcp-schema-validator.js';
import { loadMcpSdk, loadedMcpSdk, type McpSdk } from './mcp-sdk.js';
import { McpTarget } from './mcp-target.js';
import { McpToolListCache } from './mcp-tool-list.cache.js';
import { withPlainOptions } from '#tool-sdk/helpers/plain-agent-options.js';

/** The connection to a server went away while a request was using it. */
export class McpConnectionLostError extends Error {}

/**
 * Connecting to a server failed (unreachable, refused the handshake, timed
 * out). The message is the tenant's verdict (`mcp-failure.ts`); `detail`,
 * with the address and the transport's words, is the log's.
 */
export class McpConnectError extends Error {
  constructor(
    message: string,
    readonly detail: string | null = null,
  ) {
    super(message);
  }
}

/** What an operation on a pooled connection may use besides its SDK client. */
export interface PooledConnection {
  readonly transport: Transport;
  readonly schemas: CompiledSchemaCache;
}

interface Connection {
  target: McpTarget;
  client: Client;
  transport: Transport;
  /** The output-schema validators the client compiled for this connection's listings, for calls that check results themselves. */
  schemas: CompiledSchemaCache;
  via: 'streamable-http' | 'sse' | 'stdio';
  /** Aborted when the connection dies, so requests waiting on it stop at once. */
  lost: AbortController;
  /** How to abort the signal of each request in flight on it (see `linkSignals`), called with `lost`'s reason. */
  inFlight: Set<(reason: unknown) => void>;
  inUse: number;
  lastUsed: number;
  closed: boolean;
}

/**
 * Errors the transports report that concern only the optional standalone GET
 * stream of streamable HTTP: requests over POST still work, so the connection
 * stays. Any other transport error means in-flight responses may never come.
 */
const BENIGN_TRANSPORT_ERRORS = /^(Streamable HTTP error: Failed to open SSE stream|Failed to reconnect SSE stream|Maximum reconnection attempts)/;

/**
 * A result for a request the client no longer waits for (cancelled, timed
 * out): the server finished anyway. The connection is fine, and retiring it
 * would fail every other caller's calls on it.
 */
const LATE_RESPONSE = /^Received a (response|progress notification) for an unknown (message ID|token)/;

const CLIENT_INFO = { name: 'switchyard-gateway', version: '0.1.0' };

/** An error the server itself answered with: the connection is fine. */
function isServerReportedError(err: unknown): boolean {
  // Only the SDK makes an McpError: with the SDK not loaded, `err` is none.
  const sdk = loadedMcpSdk();
  return sdk !== undefined && err instanceof sdk.McpError && err.code !== sdk.ErrorCode.ConnectionClosed && err.code !== sdk.ErrorCode.RequestTimeout;
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * A signal that fires when the caller's does or the connection dies,
 * detached again by `dispose`. Not `AbortSignal.any`: the SDK never removes
 * the abort listener it adds to a request's signal, so a signal still linked
 * to the connection after its request finished would make a later loss send
 * a cancellation for every request the connection ever carried. The
 * connection side is its set of requests in flight, which `retire` aborts,
 * rather than a listener on `lost` per request: adding and removing an
 * `AbortSignal` listener is most of what linking costs on every call.
 *
 * A caller whose signal is the request's own (`ownSignal`: nothing else
 * listens to it, and the caller lets the pool abort it) gets it back as it
 * is, in the set of requests in flight until `dispose`: no controller, and
 * no listener on the caller's signal.
 */
function linkSignals(caller: AbortSignal, conn: Connection, ownSignal: ((reason: unknown) => void) | undefined): { signal: AbortSignal; dispose(): void } {
  if (ownSignal) {
    if (!caller.aborted && conn.lost.signal.aborted) ownSignal(conn.lost.signal.reason);
    conn.inFlight.add(ownSignal);
    return { signal: caller, dispose: () => conn.inFlight.delete(ownSignal) };
  }
  const controller = new AbortController();
  const fromCaller = () => controller.abort(caller.reason);
  if (caller.aborted) fromCaller();
  else if (conn.lost.signal.aborted) controller.abort(conn.lost.signal.reason);
  caller.addEventListener('abort', fromCaller, { once: true });
  const abort = (reason: unknown) => controller.abort(reason);
  conn.inFlight.add(abort);
  return {
    signal: controller.signal,
    dispose: () => {
      caller.removeEventListener('abort', fromCaller);
      conn.inFlight.delete(abort);
    },
  };
}

/**
 * MCP client connections, shared across requests.
 *
 * Operator-configured servers are connected on first use and kept; a
 * request-declared server (`server_url`) is pooled under its URL and a hash
 * of its credentials, and closed after `remoteIdleTimeoutMs` unused. A
 * connection that fails (transport error, closed, a request failing outside
 * the server's own error answers) is retired, and the next use reconnects.
 */
@Injectable()
export class McpConnectionPool implements OnModuleDestroy {
  private readonly logger = new Logger('McpConnectionPool');
  private readonly connections = new Map<string, Connection>();
  private readonly connecting = new Map<string, Promise<Connection>>();
  private readonly byClient = new WeakMap<object, Connection>();
  private readonly policy: HostPolicy;
  /** Own agents, so request-declared sockets are only ever opened through the guarded lookup. */
  private readonly httpAgent = withPlainOptions(new http.Agent({ keepAlive: true }));
  private readonly httpsAgent = withPlainOptions(new https.Agent({ keepAlive: true }));
  /** Operator servers' sockets, apart: an agent pools by host and port, not by lookup. */
  private readonly operatorAgents = { http: withPlainOptions(new http.Agent({ keepAlive: true })), https: withPlainOptions(new https.Agent({ keepAlive: true })) };
  private readonly operatorTargets = new Map<string, McpTarget>();
  private readonly sweeper: NodeJS.Timeout;
  private destroyed = false;
  /** Listings per connection; cleared with the connection (see `retire`). */
  readonly toolLists: McpToolListCache;

  constructor(@Inject(MCP_SETTINGS) private readonly settings: McpSettings) {
    this.policy = new HostPolicy(settings.allowedHosts);
    this.toolLists = new McpToolListCache(settings.toolsListCacheMs, (client) => this.notificationEpoch(client));
    for (const server of settings.servers) this.operatorTargets.set(server.label, McpTarget.operator(server));
    const every = Math.max(50, Math.min(60_000, Math.floor(settings.remoteIdleTimeoutMs / 2)));
    this.sweeper = setInterval(() => this.evictIdle(), every);
    this.sweeper.unref();
  }

  get hostPolicy(): HostPolicy {
    return this.policy;
  }

  operatorTarget(label: string): McpTarget | undefined {
    return this.operatorTargets.get(label);
  }

  /**
   * The epoch of the notification stream of `client`'s connection while a
   * changed tool list would be announced on it (the server declared
   * `tools.listChanged`, the stream is open, `mcp.toolsListUntilChanged`);
   * otherwise undefined. See McpToolListCache.
   */
  private notificationEpoch(client: object): number | undefined {
    if (!this.settings.toolsListUntilChanged) return undefined;
    const conn = this.byClient.get(client);
    if (!conn || conn.closed || !(conn.transport instanceof McpHttpTransport)) return undefined;
    if (conn.client.getServerCapabilities()?.tools?.listChanged !== true) return undefined;
    return conn.transport.notificationEpoch;
  }

  /** Live pooled connections (for diagnostics and tests). */
  get size(): number {
    return this.connections.size;
  }

  /**
   * Runs `op` with a connected client. `op` gets a signal that fires when the
   * caller's does or when the connection dies, and must pass it to the SDK.
   *
   * With `retryStale`, an `op` that fails on a connection pooled earlier (not
   * one made for this call) for a reason other than the server's own error
   * answer runs once more on a fresh connection: a server that restarted
   * without the pool noticing forgets its sessions. Only for idempotent
   * requests such as `tools/list`; a tool call is never sent twice.
   *
   * With `ownSignal`, `signal` is the request's own and `ownSignal` aborts it:
   * `op` gets it as it is, and a lost connection aborts it (see `linkSignals`).
   * Not with `retryStale`: a signal the loss aborted could not carry the retry.
   */
  async use<T>(
    target: McpTarget,
    signal: AbortSignal,
    op: (client: Client, signal: AbortSignal, connection: PooledConnection) => Promise<T>,
    options: { retryStale?: boolean; ownSignal?: (reason: unknown) => void } = {},
  ): Promise<T> {
    const ownSignal = options.retryStale ? undefined : options.ownSignal;
    for (let attempt = 0; ; attempt++) {
      const { conn, fresh } = this.pooled(target) ?? (await this.acquire(target, signal));
      conn.inUse++;
      conn.lastUsed = Date.now();
      const linked = linkSignals(signal, conn, ownSignal);
      try {
        return await op(conn.client, linked.signal, conn);
      } catch (err) {
        // The caller gave up (an own signal the loss aborted carries the loss's reason: that is the loss below).
        if (signal.aborted && signal.reason !== conn.lost.signal.reason) throw err;
        const lost = conn.lost.signal.aborted;
        if (!lost && isServerReportedError(err)) throw err;
        if (!lost) void this.retire(conn, `request failed: ${err instanceof Error ? err.message : String(err)}`);
        if (options.retryStale && !fresh && attempt === 0) continue;
        // The SDK rewraps an aborted request's reason as a RequestTimeout
        // McpError; the connection's own reason says what really happened.
        throw lost ? conn.lost.signal.reason : err;
      } finally {
        linked.dispose();
        conn.inUse--;
        conn.lastUsed = Date.now();
      }
    }
  }

  /** The target's kept `tools/list` answer for `filter`, if its connection is live and one is kept (see McpToolListCache). */
  keptListing(target: McpTarget, filter: string): Tool[] | undefined {
    const conn = this.connections.get(target.key);
    if (!conn || conn.closed) return undefined;
    const tools = this.toolLists.get(conn.client, filter);
    // Served from the connection: it is in use, whatever the idle sweep would otherwise think.
    if (tools) conn.lastUsed = Date.now();
    return tools;
  }

  /** Drops the target's connection (if any) so that the next use reconnects. */
  discard(target: McpTarget, reason: string): void {
    const conn = this.connections.get(target.key);
    if (conn) void this.retire(conn, reason);
  }

  async onModuleDestroy(): Promise<void> {
    this.destroyed = true;
    clearInterval(this.sweeper);
    // Connects still in flight see `destroyed` when they finish and close themselves.
    await Promise.allSettled([...this.connecting.values()]);
    await Promise.allSettled([...this.connections.values()].map((conn) => this.retire(conn, 'gateway shutting down', true)));
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
    this.operatorAgents.http.destroy();
    this.operatorAgents.https.destroy();
  }

  // --- connecting -----------------------------------------------------------

  /** The target's live pooled connection, taken without a turn of the event loop: most calls find one. */
  private pooled(target: McpTarget): { conn: Connection; fresh: false } | undefined {
    if (this.destroyed) return undefined;
    const existing = this.connections.get(target.key);
    return existing && !existing.closed ? { conn: existing, fresh: false } : undefined;
  }

  /** `fresh` is false for a connection that was already pooled when the caller asked. */
  private async acquire(target: McpTarget, signal: AbortSignal): Promise<{ conn: Connection; fresh: boolean }> {
    if (this.destroyed) throw new McpConnectError('The MCP connection pool is shut down.');
    const existing = this.pooled(target);
    if (existing) return existing;
    let pending = this.connecting.get(target.key);
    if (!pending) {
      // The connect runs under the pool's own deadline, not the first caller's
      // signal: a second request waiting on the same connection must not fail
      // because the first one's client went away.
      pending = this.connect(target).finally(() => this.connecting.delete(target.key));
      pending.catch(() => undefined);
      this.connecting.set(target.key, pending);
    }
    return { conn: await raceAbort(pending, signal), fresh: true };
  }

  private async connect(target: McpTarget): Promise<Connection> {
    // Loaded here, on the first connection, not at boot (see mcp-sdk.ts); before
    // the deadline starts, which is the server's time to answer, not ours to load.
    const sdk = await loadMcpSdk();
    const deadline = AbortSignal.timeout(this.settings.discoveryTimeoutMs);
    let refusal: RefusedDestinationError | undefined;
    const guardedFetch =
      target.kind === 'remote'
        ? createGuardedFetch({
            policy: this.policy,
            httpAgent: this.httpAgent,
            httpsAgent: this.httpsAgent,
            onRefusal: (e) => (refusal ??= e),
          })
        : undefined;

    const attempt = async (via: Connection['via']): Promise<Connection> => {
      const transport = this.transportFor(sdk, target, via, guardedFetch, (e) => (refusal ??= e));
      const schemas = new CompiledSchemaCache();
      const client = new sdk.Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: schemas });
      try {
        await client.connect(transport, { signal: deadline, timeout: this.settings.discoveryTimeoutMs });
      } catch (err) {
        await client.close().catch(() => undefined);
        throw err;
      }
      return { target, client, transport, schemas, via, lost: new AbortController(), inFlight: new Set(), inUse: 0, lastUsed: Date.now(), closed: false };
    };

    let conn: Connection;
    try {
      if (target.kind === 'operator') {
        conn = await attempt(target.transport as Connection['via']);
      } else {
        // The SDK's documented fallback: try streamable HTTP; a 4xx answer to
        // its initialize POST means a server that only speaks the older SSE transport.
        try {
          conn = await attempt('streamable-http');
        } catch (err) {
          if (refusal || deadline.aborted || !(err instanceof sdk.StreamableHTTPError && (err.code ?? 0) >= 400 && (err.code ?? 0) < 500)) throw err;
          conn = await attempt('sse');
        }
      }
    } catch (err) {
      if (refusal) throw refusal;
      const detail = deadline.aborted ? target.redact(`MCP server ${target.describe()}: no answer within ${this.settings.discoveryTimeoutMs} ms`) : mcpFailureDetail(target, err);
      throw new McpConnectError(mcpFailureMessage(target, mcpFailureVerdict(err, deadline.aborted)), detail);
    }

    if (this.destroyed) {
      await conn.client.close().catch(() => undefined);
      throw new McpConnectError('The MCP connection pool is shut down.');
    }
    conn.client.onclose = () => void this.retire(conn, 'connection closed');
    // The server says its tools changed: the next request lists them again.
    conn.client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => this.toolLists.invalidate(conn.client));
    conn.client.onerror = (err: Error) => {
      if (LATE_RESPONSE.test(err.message)) {
        this.logger.debug(`MCP server ${target.describe()} answered a request no longer waited for`);
        return;
      }
      if (BENIGN_TRANSPORT_ERRORS.test(err.message)) {
        this.logger.debug(`MCP server ${target.describe()}: ${target.redact(err.message)}`);
        return;
      }
      void this.retire(conn, err.message);
    };
    this.connections.set(target.key, conn);
    this.byClient.set(conn.client, conn);
    this.logger.log(`connected to MCP server ${target.describe()} over ${conn.via}`);
    if (target.kind === 'remote') this.enforceRemoteLimit(conn);
    return conn;
  }

  private transportFor(sdk: McpSdk, target: McpTarget, via: Connection['via'], guardedFetch: FetchLike | undefined, onRefusal: (e: RefusedDestinationError) => void): Transport {
    if (via === 'stdio') {
      const server = target.operator!;
      const transport = new sdk.StdioClientTransport({ command: server.command!, args: server.args, env: server.env, cwd: server.cwd, stderr: 'pipe' });
      // Drained so a chatty server cannot fill the pipe and stall; kept at debug level.
      transport.stderr?.on('data', (chunk: Buffer) => this.logger.debug(`[${target.label} stderr] ${target.redact(chunk.toString('utf8').trimEnd())}`));
      return transport;
    }
    const url = target.url!;
    const requestInit: RequestInit = { headers: target.headers() };
    if (via === 'sse') return new sdk.SSEClientTransport(url, { requestInit, fetch: guardedFetch });
    // Over streamable HTTP each request has its own POST; cancelling a call closes it (see McpHttpTransport).
    if (target.kind === 'operator') return new McpHttpTransport({ url, headers: target.headers(), agents: this.operatorAgents });
    let match: HostMatch;
    try {
      match = this.policy.vet(url);
    } catch (err) {
      onRefusal(err as RefusedDestinationError);
      throw err;
    }
    return new McpHttpTransport({
      url,
      headers: target.headers(),
      agents: { http: this.httpAgent, https: this.httpsAgent },
      guard: { lookup: guardedLookup(this.policy, match, systemResolve, onRefusal), policy: this.policy, onRefusal },
    });
  }

  // --- retiring -------------------------------------------------------------

  private async retire(conn: Connection, reason: string, graceful = false): Promise<void> {
    if (conn.closed) return;
    conn.closed = true;
    this.toolLists.invalidate(conn.client);
    if (this.connections.get(conn.target.key) === conn) this.connections.delete(conn.target.key);
    conn.lost.abort(new McpConnectionLostError(`The connection to MCP server ${conn.target.publicName()} was lost.`));
    for (const abort of conn.inFlight) abort(conn.lost.signal.reason);
    conn.inFlight.clear();
    if (!graceful) this.logger.warn(`MCP server ${conn.target.describe()} connection retired: ${conn.target.redact(reason)}`);
    if (graceful && conn.transport instanceof McpHttpTransport) {
      // Lets the server free the session now instead of at its own timeout.
      await raceAbort(conn.transport.terminateSession(), AbortSignal.timeout(1_000)).catch(() => undefined);
    }
    await conn.client.close().catch(() => undefined);
  }

  private evictIdle(): void {
    const now = Date.now();
    for (const conn of this.connections.values()) {
      if (conn.target.kind === 'remote' && conn.inUse === 0 && now - conn.lastUsed >= this.settings.remoteIdleTimeoutMs) {
        void this.retire(conn, 'idle', true);
      }
    }
  }

  /** Over the cap, idle connections go, oldest first; never the one just made for a waiting caller. */
  private enforceRemoteLimit(added: Connection): void {
    const remote = [...this.connections.values()].filter((c) => c.target.kind === 'remote');
    let excess = remote.length - this.settings.maxRemoteConnections;
    if (excess <= 0) return;
    for (const conn of remote.filter((c) => c.inUse === 0 && c !== added).sort((a, b) => a.lastUsed - b.lastUsed)) {
      if (excess-- <= 0) break;
      void this.retire(conn, 'pool full', true);
    }
  }
}
