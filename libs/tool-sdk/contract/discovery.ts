import type { PublicItem } from '../items.js';
import type { RequestLocal } from '../request-local.js';

/**
 * The request a tool type's stages run for, one object per request, passed
 * to `discover` and to `execute`: who it runs for, and the module's own
 * per-request state (`local`).
 */
export interface ToolRequestContext {
  readonly requestId: string;
  /** Who the request runs for (the API key's hash), null without authentication. */
  readonly owner: string | null;
  /** This request's value of `slot`, made by `slot.create()` on first use. */
  local<T>(slot: RequestLocal<T>): T;
}

/** What a handler's discover stage returns: private state for normalize plus public items to emit. */
export interface DiscoveryResult<D = unknown> {
  state: D;
  /** Public output items emitted before the first round (MCP: `mcp_list_tools`). */
  items?: PublicItem[];
}

export interface DiscoveryContext {
  /** The request: the same object for every declaration's discovery and every call's execution. */
  request: ToolRequestContext;
  signal: AbortSignal;
  /** Items already in the conversation (history + input), to suppress repeated discovery output. */
  history: readonly PublicItem[];
  requestId: string;
  /** Who the request runs for (the API key's hash), null without authentication. */
  owner?: string | null;
}
