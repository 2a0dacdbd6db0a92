import type { JsonObject, PublicItem, Usage } from '#tool-sdk/items.js';
import type { ResponseRequest } from './response-request.js';

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled' | 'queued';

export interface ResponseSnapshot {
  id: string;
  createdAt: number;
  status: ResponseStatus;
  output: PublicItem[];
  tools: readonly JsonObject[];
  usage: Usage | null;
  error: { code: string; message: string } | null;
  incompleteReason: string | null;
  completedAt: number | null;
}

/**
 * The public response object. Every field the Open Responses schema lists is
 * present; the ones it declares non-nullable carry defaults instead of null,
 * because strict clients (Codex CLI, serde-based SDKs) reject anything less.
 */
export function buildResponseObject(req: ResponseRequest, s: ResponseSnapshot): JsonObject {
  const body: JsonObject = {
    id: s.id,
    object: 'response',
    created_at: s.createdAt,
    completed_at: s.completedAt,
    status: s.status,
    incomplete_details: s.incompleteReason ? { reason: s.incompleteReason } : null,
    model: req.model,
    previous_response_id: req.previousResponseId,
    instructions: req.instructions,
    output: s.output,
    error: s.error,
    tools: s.tools,
    tool_choice: req.toolChoice,
    truncation: req.truncation,
    parallel_tool_calls: req.parallelToolCalls,
    text: req.text,
    top_p: req.topP ?? 1,
    presence_penalty: req.presencePenalty,
    frequency_penalty: req.frequencyPenalty,
    top_logprobs: req.topLogprobs,
    temperature: req.temperature ?? 1,
    reasoning: req.reasoning,
    usage: s.usage,
    max_output_tokens: req.maxOutputTokens,
    max_tool_calls: req.maxToolCalls,
    store: req.store,
    background: req.background,
    service_tier: req.serviceTier,
    metadata: req.metadata,
    safety_identifier: req.safetyIdentifier,
    prompt_cache_key: req.promptCacheKey,
    user: req.user,
  };
  if (req.conversationId) body.conversation = { id: req.conversationId };
  return body;
}
