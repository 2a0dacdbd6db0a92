import type { IncomingMessage } from 'node:http';
import type { JsonObject, ModelItem, PublicItem } from '#tool-sdk/items.js';
import type { JsonSource } from '../protocol/json-source.js';

/**
 * The HTTP request a run or relayed call answers, when it answers one: the
 * per-request observers (the request log line, its metrics) find that
 * request's record through it. A symbol key, so that copies of the request
 * made by spreading it (a continuation's effective request, a background run)
 * keep it, and JSON and structured clones never carry it. Passed explicitly
 * because async context (AsyncLocalStorage) costs every promise of every
 * request a hook call on Node 20; it is entered only while tracing is on.
 */
export const SERVED_REQUEST: unique symbol = Symbol('switchyard.servedRequest');

/** `tool_choice` as the client sent it (validated). */
export type PublicToolChoice =
  | 'auto'
  | 'none'
  | 'required'
  | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: JsonObject[] }
  /** Any other object form is answered by the tool module claiming its `type` (`ToolHandler.toolChoice`). */
  | { type: string; [key: string]: unknown };

/**
 * A validated `POST /v1/responses` body in the form the loop runs on.
 * Produced by the HTTP layer (or the WebSocket layer); never raw JSON.
 */
export interface ResponseRequest {
  model: string;
  /** This request's own input items, each with an id. */
  input: PublicItem[];
  instructions: string | null;
  /** Raw tool declarations, validated per type by their handlers during preparation. */
  tools: JsonObject[];
  /**
   * The bytes `tools` was read from, when the HTTP body reader saw them
   * (`ScannedBody`): the tool preparation keys and prepares the list from
   * them rather than serializing and hashing it again. Its `value` is the
   * `tools` array it describes; a request whose `tools` was replaced since
   * (a continuation inheriting the stored ones) leaves it unused.
   */
  toolsSource?: JsonSource;
  toolChoice: PublicToolChoice;
  parallelToolCalls: boolean;
  temperature: number | null;
  topP: number | null;
  maxOutputTokens: number | null;
  maxToolCalls: number | null;
  text: JsonObject;
  reasoning: { effort: string | null; summary: string | null } | null;
  truncation: 'disabled' | 'auto';
  metadata: Record<string, string>;
  store: boolean;
  background: boolean;
  previousResponseId: string | null;
  conversationId: string | null;
  include: string[];
  stream: boolean;
  promptCacheKey: string | null;
  safetyIdentifier: string | null;
  user: string | null;
  serviceTier: string;
  topLogprobs: number;
  presencePenalty: number;
  frequencyPenalty: number;
  /** Identity of the inbound API key, for storage isolation. */
  owner: string | null;
  /** Inbound headers the operator chose to forward to the upstream (`upstream.forwardHeaders`), lower-cased names. */
  forwardedHeaders?: Record<string, string>;
  /**
   * Whether the body carried `tools` / `tool_choice` at all. A continuation
   * that omits them inherits the previous response's; one that sends
   * `tools: []` means "no tools". Absent means not sent.
   */
  toolsSupplied?: boolean;
  toolChoiceSupplied?: boolean;
  /**
   * `generate: false` (Codex's WebSocket prewarm): prepare tools and save the
   * state as for any response, but call no model; the response completes at
   * once with empty output, and the next turn continues from it.
   */
  generate?: boolean;
  /**
   * The response id, when the caller had to know it before the run started
   * (a background response is answered `queued` before it runs). Else the run picks one.
   */
  responseId?: string;
  /**
   * The edge a run without an HTTP request of its own came in by (`RPC` and its broker
   * pattern), for its log line and metrics; absent: WebSocket or background.
   */
  edge?: { method: string; path: string };
  /** Epoch seconds, with `responseId`. */
  createdAt?: number;
  /**
   * This request's reasoning stream event names, when its client chose them
   * (`x-switchyard-reasoning-events`); else `server.reasoningEvents`.
   */
  reasoningEvents?: 'openai' | 'openresponses';
  /**
   * The model server's own count of the first round's prompt (its `/tokenize`), when the
   * surface measured it (Messages does, to fit Claude Code's budget); else the budget is fitted to an estimate.
   */
  promptTokens?: number;
  /** `context_management[].compact_threshold`: the state module shortens the prior transcript past this many estimated tokens. */
  compactThreshold?: number | null;
  /** The HTTP request this run answers, if any (see `SERVED_REQUEST`). */
  [SERVED_REQUEST]?: IncomingMessage;
}

/** Conversation state that precedes this request (from storage or the same WebSocket). */
export interface PriorState {
  /** What the model saw so far, in order. */
  modelItems: ModelItem[];
  /** Public items of the conversation so far (for approval lookups and discovery suppression). */
  publicItems: PublicItem[];
  /**
   * Public items the run translates for the model and appends after
   * `modelItems` (a conversation's items, which are stored in public form:
   * translating them needs the request's tool registry, which only the run has).
   */
  untranslated?: PublicItem[];
  /** The continued response's effective tools and tool_choice, used when the request omits `tools`. */
  tools?: JsonObject[];
  toolChoice?: PublicToolChoice;
  /** `modelItems` replace an older transcript with a summary; storage keeps them as the new base. */
  compacted?: boolean;
}
