import type { PublicItem } from '../items.js';

/** What a handler's discover stage returns: private state for normalize plus public items to emit. */
export interface DiscoveryResult<D = unknown> {
  state: D;
  /** Public output items emitted before the first round (MCP: `mcp_list_tools`). */
  items?: PublicItem[];
}

export interface DiscoveryContext {
  signal: AbortSignal;
  /** Items already in the conversation (history + input), to suppress repeated discovery output. */
  history: readonly PublicItem[];
  requestId: string;
  /** Who the request runs for (the API key's hash), null without authentication. */
  owner?: string | null;
}
