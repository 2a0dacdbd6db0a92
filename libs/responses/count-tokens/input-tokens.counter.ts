import { Inject, Injectable, Optional } from '@nestjs/common';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import { ToolHandlerExplorer } from '#core/handlers/tool-handler.explorer.js';
import { newId } from '#tool-sdk/ids.js';
import { HistoryTranslator } from '#core/loop/history-to-model.js';
import { REASONING_SEALER, type ReasoningSealer } from '#core/loop/reasoning-sealer.interface.js';
import type { ResponseRequest } from '#core/loop/response-request.js';
import type { ModelItem } from '#tool-sdk/items.js';
import { ToolPreparationService } from '#core/registry/tool-preparation.service.js';
import { UPSTREAM_CLIENT, type TokenizeRequest, type UpstreamClient } from '#core/upstream/upstream-client.interface.js';

/** Characters per token for the estimate, as `count_tokens` on the Messages API uses. */
const ESTIMATE_CHARS_PER_TOKEN = 4;

export interface InputTokenCount {
  inputTokens: number;
  /** `upstream`: the model server's own tokenizer (`/tokenize`); `estimate`: characters / 4. */
  source: 'upstream' | 'estimate';
}

/**
 * `POST /v1/responses/input_tokens` (the SDK's `responses.inputTokens.count`):
 * the prompt prepared as the loop would send it (tools discovered and
 * normalized, items translated for a function-calling model) and counted by
 * the upstream's `/tokenize`, which applies the model's chat template; an
 * estimate when it has none. The same preparation as the Messages API's
 * `count_tokens` (`libs/messages/count-tokens`).
 */
@Injectable()
export class InputTokensCounter {
  constructor(
    private readonly preparation: ToolPreparationService,
    private readonly explorer: ToolHandlerExplorer,
    @Inject(UPSTREAM_CLIENT) private readonly upstream: UpstreamClient,
    @Optional() @Inject(REASONING_SEALER) private readonly reasoning?: ReasoningSealer,
  ) {}

  async count(request: ResponseRequest, signal: AbortSignal): Promise<InputTokenCount> {
    // The stored history a continuation would add is not read here: counting reads nothing of a tenant's state.
    if (request.previousResponseId)
      throw new InvalidRequestError("'previous_response_id' is not supported when counting: send the items to count as 'input'.", 'previous_response_id', 'unsupported_parameter');
    if (request.conversationId)
      throw new InvalidRequestError("'conversation' is not supported when counting: send the items to count as 'input'.", 'conversation', 'unsupported_parameter');
    const registry = await this.preparation.prepare(request.tools, { history: request.input, signal, requestId: newId('count'), toolsSource: request.toolsSource });
    const items: ModelItem[] = [];
    new HistoryTranslator(registry, this.explorer, this.reasoning).translate(request.input, items);
    const prompt: TokenizeRequest = { model: request.model, instructions: request.instructions, input: items, tools: registry.functions };
    const counted = this.upstream.tokenize ? await this.upstream.tokenize(prompt, signal) : null;
    if (counted !== null) return { inputTokens: counted, source: 'upstream' };
    return {
      inputTokens: Math.ceil(JSON.stringify({ instructions: prompt.instructions, input: prompt.input, tools: prompt.tools }).length / ESTIMATE_CHARS_PER_TOKEN),
      source: 'estimate',
    };
  }
}
