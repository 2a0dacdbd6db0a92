import { Inject, Injectable, Optional } from '@nestjs/common';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import { ToolHandlerExplorer } from '#core/handlers/tool-handler.explorer.js';
import type { JsonObject, PublicItem } from '#tool-sdk/items.js';
import type { PublicToolChoice, ResponseRequest } from '#core/loop/response-request.js';
import { REASONING_SEALER, type ReasoningSealer } from '#core/loop/reasoning-sealer.interface.js';
import { plainCreateFields, toCreateResponseDto } from './create-response.dto.js';
import { jsonShapeViolation } from './json-shape.js';
import { shapeError } from './json-shape.scanner.js';
import { parseInputItems } from './input-items.parser.js';
import { parseMetadata } from './metadata.parser.js';
import { requestBody, validateFields } from '#tool-sdk/routes/request-validation.js';
import { assertStorableText } from '#tool-sdk/storable-text.js';
import type { ScannedBody } from '#tool-sdk/routes/scanned-body.js';

function unsupported(param: string, why: string): never {
  throw new InvalidRequestError(`'${param}' is not supported by this gateway: ${why}`, param, 'unsupported_parameter');
}

/**
 * Reasoning effort on the scale OpenAI-style model servers take (vLLM:
 * `low` / `medium` / `high`, `none` where the model can skip thinking).
 * OpenAI's own scale is longer and grows with its models (Codex sends
 * `xhigh`, `max`); a value beyond the server's is asked as the nearest it
 * has, and the response's `reasoning.effort` says what was asked.
 */
const NEAREST_EFFORT: Readonly<Record<string, string>> = { none: 'none', minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high', ultra: 'high' };

function upstreamEffort(effort: string | null | undefined): string | null {
  return effort ? NEAREST_EFFORT[effort] : null;
}

/**
 * A self-hosted model server has one tier. Every tier OpenAI accepts is
 * accepted (`priority` is Codex's fast mode) and served on it; the
 * response's `service_tier` says so, as OpenAI's names the tier that served
 * the request. `auto` stays `auto`, as it did before tiers were mapped.
 */
function servedTier(tier: string | null | undefined): string {
  return !tier || tier === 'auto' ? 'auto' : 'default';
}

/**
 * Turns a raw JSON body into a `ResponseRequest`, or a 400 that names the
 * offending field. Fields the gateway cannot honour are refused here, loudly,
 * rather than ignored. `scanned` is what the HTTP body reader learnt of
 * `body` from its bytes (`scannedBodyOf(req)`): the checks it answered are
 * not run again, and the bytes of its `tools` go on with the request.
 */
@Injectable()
export class CreateResponseParser {
  constructor(
    private readonly explorer: ToolHandlerExplorer,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Optional() @Inject(REASONING_SEALER) private readonly reasoning?: ReasoningSealer,
  ) {}

  parse(body: unknown, owner: string | null = null, scanned?: ScannedBody): ResponseRequest {
    const raw = requestBody(body);
    const read = scanned?.body === raw ? scanned : undefined;
    // The HTTP body reader already refused these on the bytes; frames and embedding hosts arrive here parsed.
    const shape = read ? null : jsonShapeViolation(raw);
    if (shape) throw shapeError(shape);
    // HTTP routes checked this in their guard; WebSocket frames and RPC requests are checked here.
    if (read?.storableText !== true) assertStorableText(raw);
    const dto = plainCreateFields(raw) ? toCreateResponseDto(raw) : validateFields(toCreateResponseDto(raw));

    if (raw.background === true && raw.store === false) {
      throw new InvalidRequestError("Background responses are stored while they run: 'background' needs 'store' left true.", 'background');
    }
    if (raw.prompt !== undefined && raw.prompt !== null) unsupported('prompt', 'stored prompt templates need the OpenAI platform.');
    if (raw.stream_options && raw.stream !== true) {
      throw new InvalidRequestError("'stream_options' is only allowed when 'stream' is true.", 'stream_options');
    }

    const model = dto.model ?? this.config.upstream.defaultModel;
    if (!model) throw new InvalidRequestError("'model' is required.", 'model');
    const previousResponseId = dto.previous_response_id ?? null;
    const conversationId = this.conversationId(raw.conversation);
    if (previousResponseId && conversationId) {
      throw new InvalidRequestError("'previous_response_id' and 'conversation' cannot both be set.", 'conversation', 'mutually_exclusive_parameters');
    }
    if (raw.input === undefined || raw.input === null) {
      if (!previousResponseId && !conversationId) throw new InvalidRequestError("'input' is required.", 'input');
    }

    const request: ResponseRequest = {
      model,
      input: raw.input === undefined || raw.input === null ? [] : parseInputItems(raw.input, this.explorer, 'input', this.reasoning),
      instructions: dto.instructions ?? null,
      tools: this.tools(raw.tools),
      toolChoice: this.toolChoice(raw.tool_choice),
      parallelToolCalls: dto.parallel_tool_calls ?? true,
      temperature: dto.temperature ?? null,
      topP: dto.top_p ?? null,
      maxOutputTokens: dto.max_output_tokens ?? null,
      maxToolCalls: dto.max_tool_calls ?? null,
      text: this.text(dto.text ?? null),
      reasoning: dto.reasoning ? { effort: upstreamEffort(dto.reasoning.effort), summary: dto.reasoning.summary ?? dto.reasoning.generate_summary ?? null } : null,
      truncation: dto.truncation ?? 'disabled',
      metadata: parseMetadata(dto.metadata),
      store: dto.store ?? true,
      background: dto.background ?? false,
      previousResponseId,
      conversationId,
      include: dto.include ?? [],
      stream: dto.stream ?? false,
      promptCacheKey: dto.prompt_cache_key ?? null,
      safetyIdentifier: dto.safety_identifier ?? null,
      user: dto.user ?? null,
      serviceTier: servedTier(dto.service_tier),
      topLogprobs: dto.top_logprobs ?? 0,
      presencePenalty: dto.presence_penalty ?? 0,
      frequencyPenalty: dto.frequency_penalty ?? 0,
      owner,
      toolsSupplied: raw.tools !== undefined && raw.tools !== null,
      toolChoiceSupplied: raw.tool_choice !== undefined && raw.tool_choice !== null,
      compactThreshold: this.compactThreshold(raw.context_management),
      generate: dto.generate ?? true,
    };
    // `tools` is the body's own array (`this.tools` hands it on as it is), so its bytes describe it.
    if (read?.tools && read.tools.value === raw.tools) request.toolsSource = read.tools;
    return request;
  }

  /**
   * Validates a list of items outside a create body (Conversations API,
   * compaction), with the same item types accepted; errors name `root[i]`.
   */
  parseItems(value: unknown, root: string): PublicItem[] {
    if (!Array.isArray(value)) throw new InvalidRequestError(`'${root}' must be an array of items.`, root);
    return parseInputItems(value, this.explorer, root, this.reasoning);
  }

  /** Only the compaction strategy exists; the threshold is in (estimated) tokens. */
  private compactThreshold(value: unknown): number | null {
    if (value === undefined || value === null) return null;
    if (!Array.isArray(value)) throw new InvalidRequestError("'context_management' must be an array.", 'context_management');
    let threshold: number | null = null;
    value.forEach((entry, i) => {
      const path = `context_management[${i}]`;
      if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new InvalidRequestError(`${path} must be an object.`, path);
      const e = entry as JsonObject;
      if (e.type !== 'compaction') throw new InvalidRequestError(`${path}.type must be "compaction".`, `${path}.type`);
      const t = e.compact_threshold;
      if (t === undefined || t === null) return;
      if (typeof t !== 'number' || !Number.isInteger(t) || t < 1) {
        throw new InvalidRequestError(`${path}.compact_threshold must be a positive integer.`, `${path}.compact_threshold`);
      }
      threshold = t;
    });
    return threshold;
  }

  private conversationId(value: unknown): string | null {
    if (value === undefined || value === null) return null;
    if (typeof value === 'string' && value.length > 0) return value;
    if (typeof value === 'object' && typeof (value as JsonObject).id === 'string') return (value as JsonObject).id as string;
    throw new InvalidRequestError('\'conversation\' must be a conversation id or {"id": ...}.', 'conversation');
  }

  private tools(value: unknown): JsonObject[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw new InvalidRequestError("'tools' must be an array.", 'tools');
    // An indexed loop, not `forEach`: a kept list (the body reader's, deeply frozen) is a frozen
    // array, on which Node 20's `forEach` takes a slow path (7× an indexed loop for 100 tools).
    for (let i = 0; i < value.length; i++) {
      const t: unknown = value[i];
      if (!t || typeof t !== 'object' || Array.isArray(t)) throw new InvalidRequestError(`tools[${i}] must be an object.`, `tools[${i}]`);
    }
    return value as JsonObject[];
  }

  private toolChoice(value: unknown): PublicToolChoice {
    if (value === undefined || value === null) return 'auto';
    if (typeof value === 'string') {
      if (value === 'auto' || value === 'none' || value === 'required') return value;
      throw new InvalidRequestError('\'tool_choice\' must be "auto", "none", "required" or a tool object.', 'tool_choice');
    }
    if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidRequestError("'tool_choice' must be a string or an object.", 'tool_choice');
    const choice = value as JsonObject;
    if (typeof choice.type !== 'string') throw new InvalidRequestError("'tool_choice.type' is required.", 'tool_choice.type');
    if ((choice.type === 'function' || choice.type === 'custom') && (typeof choice.name !== 'string' || choice.name.length === 0)) {
      throw new InvalidRequestError("'tool_choice.name' must be a non-empty string.", 'tool_choice.name');
    }
    return choice as PublicToolChoice;
  }

  private text(value: JsonObject | null): JsonObject {
    if (!value) return { format: { type: 'text' } };
    const format = (value.format ?? { type: 'text' }) as JsonObject;
    if (!format || typeof format !== 'object') throw new InvalidRequestError("'text.format' must be an object.", 'text.format');
    switch (format.type) {
      case 'text':
      case 'json_object':
        break;
      case 'json_schema':
        if (typeof format.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(format.name)) {
          throw new InvalidRequestError("'text.format.name' is required and must match ^[a-zA-Z0-9_-]{1,64}$.", 'text.format.name');
        }
        if (!format.schema || typeof format.schema !== 'object' || Array.isArray(format.schema)) {
          throw new InvalidRequestError("'text.format.schema' must be a JSON Schema object.", 'text.format.schema');
        }
        if (format.strict !== undefined && format.strict !== null && typeof format.strict !== 'boolean') {
          throw new InvalidRequestError("'text.format.strict' must be a boolean.", 'text.format.strict');
        }
        break;
      default:
        throw new InvalidRequestError('\'text.format.type\' must be "text", "json_object" or "json_schema".', 'text.format.type');
    }
    const verbosity = value.verbosity;
    if (verbosity !== undefined && verbosity !== null && !['low', 'medium', 'high'].includes(String(verbosity))) {
      throw new InvalidRequestError('\'text.verbosity\' must be "low", "medium" or "high".', 'text.verbosity');
    }
    const out: JsonObject = { format };
    if (verbosity) out.verbosity = verbosity;
    return out;
  }
}
