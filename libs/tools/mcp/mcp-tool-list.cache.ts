import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { freezeJson } from '#tool-sdk/index.js';

interface Entry {
  tools: Tool[];
  expiresAt: number;
  /** The connection's notification epoch when the listing started; undefined if nothing would announce a change. */
  watch: number | undefined;
}

/**
 * `tools/list` answers per pooled connection and `allowed_tools` filter, kept
 * in two ways:
 *
 * - **until the server announces a change** (`mcp.toolsListUntilChanged`, on by
 *   default): for a server that declared `tools.listChanged` and whose
 *   notification stream (streamable HTTP's GET stream) stayed open since the
 *   listing, which is what the MCP spec asks of a client: list, then list again
 *   on `notifications/tools/list_changed`. The listing's `watch` is the
 *   transport's notification epoch; a stream that ends (the server restarted
 *   or went away) changes it, so the next request lists again and notices;
 * - **for `mcp.toolsListCacheMs`** (off by default), for any server.
 *
 * Keyed by the connection's SDK client, and a connection serves one target
 * (server, owner and credentials, see `McpTarget.key`): a listing made under
 * one owner's or one credential's session is never handed to another. A
 * connection that is retired takes its listings with it, and a server's
 * `notifications/tools/list_changed` drops them at once.
 *
 * A kept listing is frozen (`freezeJson`): every request it serves reads the
 * same array, so what is made from it (its functions for the model, its
 * `mcp_list_tools` item's `tools`, and their JSON text) is made once per
 * listing rather than per request (see `McpToolHandler.normalize` and
 * `listToolsItem`).
 *
 * Why the time-based cache is opt-in: a fresh listing is also how a request
 * notices a server that restarted or went away before it calls a tool (the
 * listing is retried on a new connection, a tool call never is), and how it
 * picks up a tool set changed without a notification. With it on, either is
 * seen up to `toolsListCacheMs` later.
 */
export class McpToolListCache {
  private readonly lists = new WeakMap<object, Map<string, Entry>>();
  /** Bumped by `invalidate`, so a listing that was in flight across a change is not stored. */
  private readonly generations = new WeakMap<object, number>();

  constructor(
    private readonly ttlMs: number,
    /** The connection's notification epoch now (see the class comment), or undefined. */
    private readonly watchOf: (connection: object) => number | undefined = () => undefined,
  ) {}

  /** Whether a listing on `connection` starting now could be kept, and under which watch. */
  keeps(connection: object): { watch: number | undefined } | undefined {
    const watch = this.watchOf(connection);
    return this.ttlMs > 0 || watch !== undefined ? { watch } : undefined;
  }

  /** The generation to hand back to `set` once a listing started now has finished. */
  generation(connection: object): number {
    return this.generations.get(connection) ?? 0;
  }

  get(connection: object, filter: string, now = Date.now()): Tool[] | undefined {
    const entry = this.lists.get(connection)?.get(filter);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry.tools;
    if (entry.watch !== undefined && entry.watch === this.watchOf(connection)) return entry.tools;
    this.lists.get(connection)?.delete(filter);
    return undefined;
  }

  set(connection: object, filter: string, tools: Tool[], startedAt: number, watch: number | undefined, now = Date.now()): void {
    if ((this.ttlMs <= 0 && watch === undefined) || this.generation(connection) !== startedAt) return;
    let byFilter = this.lists.get(connection);
    if (!byFilter) {
      byFilter = new Map();
      this.lists.set(connection, byFilter);
    }
    byFilter.set(filter, { tools: freezeJson(tools), expiresAt: now + this.ttlMs, watch });
  }

  invalidate(connection: object): void {
    this.lists.delete(connection);
    this.generations.set(connection, this.generation(connection) + 1);
  }
}
