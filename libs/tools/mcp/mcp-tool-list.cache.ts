import type { Tool } from '@modelcontextprotocol/sdk/types.js';

interface Entry {
  tools: Tool[];
  expiresAt: number;
}

/**
 * `tools/list` answers kept for `mcp.toolsListCacheMs`, per pooled connection
 * and `allowed_tools` filter. Off (0) unless the operator turns it on.
 *
 * Keyed by the connection's SDK client, and a connection serves one target
 * (server, owner and credentials, see `McpTarget.key`): a listing made under
 * one owner's or one credential's session is never handed to another. A
 * connection that is retired takes its listings with it, and a server's
 * `notifications/tools/list_changed` drops them at once.
 *
 * The trade-off, and why it is opt-in: a fresh listing is also how a request
 * notices a server that restarted or went away before it calls a tool (the
 * listing is retried on a new connection, a tool call never is), and how it
 * picks up a tool set changed without a notification. With the cache on,
 * either is seen up to `toolsListCacheMs` later.
 */
export class McpToolListCache {
  private readonly lists = new WeakMap<object, Map<string, Entry>>();
  /** Bumped by `invalidate`, so a listing that was in flight across a change is not stored. */
  private readonly generations = new WeakMap<object, number>();

  constructor(private readonly ttlMs: number) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  /** The generation to hand back to `set` once a listing started now has finished. */
  generation(connection: object): number {
    return this.generations.get(connection) ?? 0;
  }

  get(connection: object, filter: string, now = Date.now()): Tool[] | undefined {
    const entry = this.lists.get(connection)?.get(filter);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry.tools;
    this.lists.get(connection)?.delete(filter);
    return undefined;
  }

  set(connection: object, filter: string, tools: Tool[], startedAt: number, now = Date.now()): void {
    if (!this.enabled || this.generation(connection) !== startedAt) return;
    let byFilter = this.lists.get(connection);
    if (!byFilter) {
      byFilter = new Map();
      this.lists.set(connection, byFilter);
    }
    byFilter.set(filter, { tools, expiresAt: now + this.ttlMs });
  }

  invalidate(connection: object): void {
    this.lists.delete(connection);
    this.generations.set(connection, this.generation(connection) + 1);
  }
}
