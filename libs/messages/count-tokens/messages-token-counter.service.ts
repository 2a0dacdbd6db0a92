import { Inject, Injectable } from '@nestjs/common';
import { ToolHandlerExplorer } from '#core/handlers/tool-handler.explorer.js';
import { newId } from '#tool-sdk/ids.js';
import { HistoryTranslator } from '#core/loop/history-to-model.js';
import type { ModelItem } from '#tool-sdk/items.js';
import { ToolPreparationService } from '#core/registry/tool-preparation.service.js';
import { UPSTREAM_CLIENT, type TokenizeRequest, type UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import type { MappedMessagesRequest } from '../request/messages-request.mapper.js';

/** Characters per token for the estimate: the usual figure for English text and code with BPE tokenizers. */
export const ESTIMATE_CHARS_PER_TOKEN = 4;

export interface TokenCount {
  inputTokens: number;
  /** Before the context edits ran; equal to `inputTokens` when none applied. */
  originalInputTokens: number;
  /** `upstream`: the model server's own tokenizer; `estimate`: characters / 4. */
  source: 'upstream' | 'estimate';
}

/**
 * `POST /v1/messages/count_tokens`: the prompt is prepared exactly as the
 * loop would send it (tools discovered and normalized, history translated
 * for a function-calling model, context edits applied) and counted by the
 * upstream's `/tokenize`, which applies the model's own chat template.
 * Upstreams without `/tokenize` get an estimate.
 */
@Injectable()
export class MessagesTokenCounter {
  constructor(
    private readonly preparation: ToolPreparationService,
    private readonly explorer: ToolHandlerExplorer,
    @Inject(UPSTREAM_CLIENT) private readonly upstream: UpstreamClient,
  ) {}

  async count(mapped: MappedMessagesRequest, original: MappedMessagesRequest | null, signal: AbortSignal): Promise<TokenCount> {
    const edited = await this.prompt(mapped, signal);
    const before = original ? await this.prompt(original, signal) : edited;
    const counted = await this.tokenize(edited, signal);
    if (counted !== null) {
      const originalCount = before === edited ? counted : ((await this.tokenize(before, signal)) ?? estimate(before));
      return { inputTokens: counted, originalInputTokens: originalCount, source: 'upstream' };
    }
    return { inputTokens: estimate(edited), originalInputTokens: estimate(before), source: 'estimate' };
  }

  private async prompt(mapped: MappedMessagesRequest, signal: AbortSignal): Promise<TokenizeRequest> {
    const { request } = mapped;
    const registry = await this.preparation.prepare(request.tools, { history: request.input, signal, requestId: newId('count') });
    const items: ModelItem[] = [];
    new HistoryTranslator(registry, this.explorer).translate(request.input, items);
    return { model: request.model, instructions: request.instructions, input: items, tools: registry.functions };
  }

  private tokenize(prompt: TokenizeRequest, signal: AbortSignal): Promise<number | null> {
    return this.upstream.tokenize ? this.upstream.tokenize(prompt, signal) : Promise.resolve(null);
  }
}

/** Characters of the prompt as JSON (instructions, items, tool definitions), four to a token. */
function estimate(prompt: TokenizeRequest): number {
  return Math.ceil(JSON.stringify({ instructions: prompt.instructions, input: prompt.input, tools: prompt.tools }).length / ESTIMATE_CHARS_PER_TOKEN);
}
