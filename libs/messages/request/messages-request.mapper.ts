import type { JsonObject } from '#tool-sdk/items.js';
import type { ResponseRequest } from '#core/loop/response-request.js';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '#responses/request/json-depth.js';
import type { ThinkingSigner } from '../thinking/thinking-signer.js';
import { applyContextEdits, parseContextManagement, type AppliedEdit } from './context-edits.js';
import { mapMessageHistory } from './message-history.mapper.js';
import { mapTools } from './messages-tools.mapper.js';
import { arrayAt, booleanAt, invalid, isObject, numberAt, objectAt, present, stringAt, textOrTextBlocks, unsupported } from './request-fields.js';
import type { ToolOrigin } from './tool-origin.js';

export interface MappedMessagesRequest {
  request: ResponseRequest;
  /** Origin of each `request.tools[i]`, to name tool errors in the client's terms. */
  toolOrigins: ToolOrigin[];
  /** Set when the body asked for `context_management`: what the gateway's edits did. */
  contextManagement: { appliedEdits: AppliedEdit[] } | null;
  /** `thinking: {type: "disabled"}`: the reply carries no thinking blocks, as Anthropic's would not. */
  hideThinking: boolean;
}

export interface MessagesMappingOptions {
  signer: ThinkingSigner;
  /** `count_tokens` takes the same body without `max_tokens`, `stream` and sampling fields. */
  counting?: boolean;
  /** Whether the gateway's web_search module can run searches (a provider is configured). */
  webSearch?: boolean;
}

/** Fields this gateway maps onto the loop. */
const MAPPED = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'mcp_servers',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'stream',
  'metadata',
  'thinking',
  'output_config',
  'context_management',
]);

/** What `POST /v1/messages/count_tokens` takes (Anthropic's `MessageCountTokensParams`). */
const COUNTED = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'mcp_servers', 'thinking', 'output_config', 'context_management']);

/**
 * Accepted and ignored: they steer Anthropic's own infrastructure (service
 * tiers, regions, prompt caching, speed), which a self-hosted model does not
 * have; its server reuses cached prefixes on its own.
 */
const INFRASTRUCTURE_HINTS = new Set(['service_tier', 'inference_geo', 'cache_control', 'speed', 'diagnostics']);

/** Reasoning effort for a thinking budget, on the scale OpenAI-style reasoning models take. */
export function effortForBudget(budgetTokens: number): 'low' | 'medium' | 'high' {
  if (budgetTokens < 4096) return 'low';
  if (budgetTokens < 16384) return 'medium';
  return 'high';
}

/**
 * Validates a `POST /v1/messages` body and maps it onto a `ResponseRequest`
 * for the loop. Every refusal names its field path; fields the gateway
 * cannot honour are refused, as unknown fields are by Anthropic's own API.
 */
export function mapMessagesRequest(body: unknown, owner: string | null, options: MessagesMappingOptions): MappedMessagesRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) invalid('body', 'must be a JSON object.');
  const raw = body as JsonObject;
  if (exceedsJsonDepth(raw)) invalid('body', `nests objects or arrays deeper than ${MAX_JSON_DEPTH} levels.`, 'nesting_too_deep');
  const accepted = options.counting ? COUNTED : MAPPED;
  for (const key of Object.keys(raw)) {
    if (accepted.has(key) || INFRASTRUCTURE_HINTS.has(key)) continue;
    if (key === 'container') unsupported(key, 'it needs Anthropic-hosted features.');
    invalid(key, 'Extra inputs are not permitted.');
  }

  if (!present(raw.model)) invalid('model', 'Field required.');
  const model = stringAt(raw.model, 'model', { nonEmpty: true });
  if (!options.counting && !present(raw.max_tokens)) invalid('max_tokens', 'Field required.');
  const maxTokens = present(raw.max_tokens) ? numberAt(raw.max_tokens, 'max_tokens', 1, Number.MAX_SAFE_INTEGER, { integer: true }) : null;
  if (!present(raw.messages)) invalid('messages', 'Field required.');
  const edits = parseContextManagement(raw.context_management);
  // Edits run on the client's own blocks, before mapping: their rules are written in Anthropic's terms.
  const edited = applyContextEdits(raw.messages, edits);
  const history = mapMessageHistory(edited.messages, options.signer);
  // There is no top_k or stop-sequence field on the way to the upstream: refusing beats ignoring.
  if (present(raw.top_k)) unsupported('top_k', 'the upstream is called through the OpenAI API, which has no top_k.');
  if (present(raw.stop_sequences) && arrayAt(raw.stop_sequences, 'stop_sequences').length > 0) {
    unsupported('stop_sequences', 'the upstream is called without stop sequences; send an empty list or leave it out.');
  }
  const { tools, origins, toolChoice, parallelToolCalls, include, maxToolCalls } = mapTools(raw, { webSearch: options.webSearch ?? false });
  const systemBlocks = present(raw.system) ? textOrTextBlocks(raw.system, 'system') : [];
  const system = [...withoutBillingHeader(systemBlocks), ...history.leadingSystem, ...history.trailingSystem].join('\n\n');

  const request: ResponseRequest = {
    model,
    input: history.items,
    instructions: system.length > 0 ? system : null,
    tools,
    toolChoice,
    parallelToolCalls,
    temperature: present(raw.temperature) ? numberAt(raw.temperature, 'temperature', 0, 1) : null,
    topP: present(raw.top_p) ? numberAt(raw.top_p, 'top_p', 0, 1) : null,
    maxOutputTokens: maxTokens,
    maxToolCalls,
    text: textFormat(raw.output_config),
    reasoning: reasoning(raw.thinking, raw.output_config, maxTokens),
    truncation: 'disabled',
    metadata: {},
    // Messages is stateless: the client sends the whole conversation every turn.
    store: false,
    background: false,
    previousResponseId: null,
    conversationId: null,
    include,
    stream: present(raw.stream) ? booleanAt(raw.stream, 'stream') : false,
    promptCacheKey: null,
    safetyIdentifier: null,
    user: userId(raw.metadata),
    serviceTier: 'auto',
    topLogprobs: 0,
    presencePenalty: 0,
    frequencyPenalty: 0,
    owner,
    toolsSupplied: true,
    toolChoiceSupplied: present(raw.tool_choice),
  };
  return {
    request,
    toolOrigins: origins,
    contextManagement: present(raw.context_management) ? { appliedEdits: edited.appliedEdits } : null,
    hideThinking: isObject(raw.thinking) && raw.thinking.type === 'disabled',
  };
}

/**
 * Claude Code opens its system prompt with a billing line
 * (`x-anthropic-billing-header: cc_version=...; cch=...;`) for Anthropic's
 * accounting. It changes with every session and version, so as the first
 * bytes of the prompt it would make every new session miss the model
 * server's prefix cache; and it says nothing to the model. The line is
 * removed, and a block left empty with it.
 */
const BILLING_LINE = /^x-anthropic-billing-header:[^\n]*(\n|$)/gm;

export function withoutBillingHeader(blocks: string[]): string[] {
  return blocks.flatMap((text) => {
    if (!text.includes('x-anthropic-billing-header:')) return [text];
    const rest = text.replace(BILLING_LINE, '');
    return rest.trim().length > 0 ? [rest] : [];
  });
}

function userId(value: unknown): string | null {
  if (!present(value)) return null;
  const metadata = objectAt(value, 'metadata');
  for (const key of Object.keys(metadata)) if (key !== 'user_id') invalid(`metadata.${key}`, 'Extra inputs are not permitted.');
  return present(metadata.user_id) ? stringAt(metadata.user_id, 'metadata.user_id') : null;
}

/**
 * `thinking.budget_tokens` becomes a reasoning effort (the knob OpenAI-style
 * upstreams have); `output_config.effort` names one directly and wins.
 * Adaptive thinking leaves the choice to the model server's default.
 * Disabled thinking asks for no effort; since an open reasoning model cannot
 * always be told through the API not to think, the reply leaves its
 * reasoning out instead (`hideThinking`), as Anthropic's reply would.
 */
function reasoning(thinking: unknown, outputConfig: unknown, maxTokens: number | null): ResponseRequest['reasoning'] {
  let effort: string | null = null;
  if (present(thinking)) {
    const config = objectAt(thinking, 'thinking');
    switch (config.type) {
      case 'enabled': {
        const budget = numberAt(config.budget_tokens, 'thinking.budget_tokens', 1024, Number.MAX_SAFE_INTEGER, { integer: true });
        if (maxTokens !== null && budget >= maxTokens) invalid('thinking.budget_tokens', 'must be less than max_tokens.');
        effort = effortForBudget(budget);
        break;
      }
      case 'disabled':
      case 'adaptive':
        break;
      default:
        invalid('thinking.type', 'must be "enabled", "disabled" or "adaptive".');
    }
  }
  if (present(outputConfig)) {
    const config = objectAt(outputConfig, 'output_config');
    if (present(config.effort)) {
      const named = stringAt(config.effort, 'output_config.effort');
      if (!['low', 'medium', 'high', 'xhigh', 'max'].includes(named)) invalid('output_config.effort', 'must be "low", "medium", "high", "xhigh" or "max".');
      effort = named === 'xhigh' || named === 'max' ? 'high' : named;
    }
  }
  return effort ? { effort, summary: null } : null;
}

/** `output_config.format` (a JSON schema) is the Responses API's `text.format` json_schema. */
function textFormat(outputConfig: unknown): JsonObject {
  if (!present(outputConfig)) return { format: { type: 'text' } };
  const config = objectAt(outputConfig, 'output_config');
  for (const key of Object.keys(config)) if (key !== 'effort' && key !== 'format') invalid(`output_config.${key}`, 'Extra inputs are not permitted.');
  if (!present(config.format)) return { format: { type: 'text' } };
  const format = objectAt(config.format, 'output_config.format');
  if (format.type !== 'json_schema') invalid('output_config.format.type', 'must be "json_schema".');
  return { format: { type: 'json_schema', name: 'output', schema: objectAt(format.schema, 'output_config.format.schema'), strict: true } };
}
