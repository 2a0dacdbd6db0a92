import { Inject, Injectable } from '@nestjs/common';
import { ClientClosedError, UpstreamUnavailableError } from '#tool-sdk/errors.js';
import { newId } from '#tool-sdk/ids.js';
import type { ResponseRequest, PriorState } from '#core/loop/response-request.js';
import { addUsage, emptyUsage, type MessageItem, type ModelItem, type PublicItem, type Usage } from '#tool-sdk/items.js';
import type { ModelRequest } from '#core/protocol/model-events.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import { STATE_SETTINGS, type StateSettings } from '../config/state-settings.js';
import { CompactionTokenCodec } from './compaction-token.codec.js';
import { estimateTokens, renderTranscript, splitForCompaction, type TranscriptItem } from './transcript.util.js';

const SUMMARY_INSTRUCTIONS = [
  'You compact conversations between a user and an assistant so that the assistant can continue them with less context.',
  'Write a dense summary of the transcript you are given: the user’s goals and constraints, decisions made, facts and tool results',
  'that are still needed, open questions and the current state of the work. Keep names, numbers, identifiers and file paths exact.',
  'Write it for the assistant, in the third person, with no preamble.',
].join(' ');

const SUMMARY_REQUEST = 'Summarize the transcript above now, following your instructions.';

/** How the model reads a compaction: a developer note ahead of the turns kept verbatim. */
export function summaryMessage(summary: string): MessageItem {
  return {
    type: 'message',
    role: 'developer',
    content: `Summary of the earlier part of this conversation, which was compacted to save context:\n\n${summary}`,
  };
}

/**
 * A kept item as an output item resource: the compacted output is validated
 * like any response output (every item with an id and a status, message
 * content as parts), whatever shorthand the client used in its input.
 */
function asOutputItem(item: PublicItem): PublicItem {
  const out: Record<string, unknown> = { ...item, status: item.status ?? 'completed' };
  if (item.type === 'message' && typeof (item as MessageItem).content === 'string') {
    const text = (item as MessageItem).content as string;
    out.content = [(item as MessageItem).role === 'assistant' ? { type: 'output_text', text, annotations: [] } : { type: 'input_text', text }];
  }
  return out as PublicItem;
}

export interface CompactionItem extends Record<string, unknown> {
  type: 'compaction';
  id: string;
  encrypted_content: string;
}

export interface CompactOptions {
  model: string;
  instructions?: string | null;
  promptCacheKey?: string | null;
  signal?: AbortSignal;
}

/**
 * Compaction: the upstream model summarizes the older part of a
 * conversation, the newest items stay verbatim. The summary travels to the
 * client as an opaque `compaction` item (`/v1/responses/compact`) or, for
 * `context_management`, replaces the stored transcript the run continues from.
 */
@Injectable()
export class CompactionService {
  readonly codec: CompactionTokenCodec;

  constructor(
    @Inject(UPSTREAM_CLIENT) private readonly upstream: UpstreamClient,
    @Inject(STATE_SETTINGS) private readonly settings: StateSettings,
  ) {
    this.codec = new CompactionTokenCodec(settings.compactionKey);
  }

  /** The model-facing form of a `compaction` input item (refused with a 400 when forged or mangled). */
  toModelItems(item: PublicItem, param = 'input'): ModelItem[] {
    return [summaryMessage(this.codec.decode((item as { encrypted_content?: unknown }).encrypted_content, `${param}.encrypted_content`).summary)];
  }

  /**
   * `POST /v1/responses/compact`: the output is the compaction item followed
   * by the items kept verbatim, in conversation order, ready to be sent back
   * as the next request's input.
   */
  async compact(items: PublicItem[], options: CompactOptions): Promise<{ output: PublicItem[]; usage: Usage }> {
    const split = splitForCompaction(items, this.settings.compactionKeepItems);
    if (!split) return { output: [], usage: emptyUsage() };
    const { summary, usage } = await this.summarize(split.head, options);
    const item: CompactionItem = {
      type: 'compaction',
      id: newId('cmp'),
      encrypted_content: this.codec.encode({ summary, createdAt: Math.floor(Date.now() / 1000), model: options.model }),
    };
    return { output: [item, ...split.tail.map(asOutputItem)], usage };
  }

  /**
   * `context_management` compaction: when the prior transcript plus this
   * request's input exceeds the threshold, the prior part is summarized
   * before the first round. Public items stay whole for approval lookups.
   */
  async autoCompact(prior: PriorState, request: ResponseRequest): Promise<PriorState> {
    const threshold = request.compactThreshold;
    if (!threshold) return prior;
    const untranslated = prior.untranslated ?? [];
    const transcript: TranscriptItem[] = [...prior.modelItems, ...untranslated];
    if (estimateTokens([...transcript, ...request.input]) <= threshold) return prior;
    const split = splitForCompaction(transcript, this.settings.compactionKeepItems);
    if (!split) return prior;
    const { summary } = await this.summarize(split.head, { model: request.model, instructions: request.instructions, promptCacheKey: request.promptCacheKey });
    // Model items precede untranslated ones, so the tail divides at that boundary.
    const firstUntranslated = prior.modelItems.length;
    const tailStart = transcript.length - split.tail.length;
    return {
      ...prior,
      modelItems: [summaryMessage(summary), ...(transcript.slice(tailStart, Math.max(tailStart, firstUntranslated)) as ModelItem[])],
      untranslated: transcript.slice(Math.max(tailStart, firstUntranslated)) as PublicItem[],
      compacted: true,
    };
  }

  private async summarize(items: TranscriptItem[], options: CompactOptions): Promise<{ summary: string; usage: Usage }> {
    const transcript = renderTranscript(items, (item) => {
      try {
        return this.codec.decode((item as { encrypted_content?: unknown }).encrypted_content, 'input').summary;
      } catch {
        return '(unreadable)';
      }
    });
    const context = options.instructions ? `The assistant's instructions were:\n${options.instructions}\n\n` : '';
    const request: ModelRequest = {
      model: options.model,
      instructions: SUMMARY_INSTRUCTIONS,
      input: [
        { type: 'message', role: 'developer', content: `${context}<transcript>\n${transcript}\n</transcript>` },
        { type: 'message', role: 'user', content: SUMMARY_REQUEST },
      ],
      tools: [],
      prompt_cache_key: options.promptCacheKey ?? null,
      stream: false,
    };
    const texts: string[] = [];
    const usage = emptyUsage();
    // A domain error, so that a client hanging up is not logged as a gateway failure; nobody reads the answer.
    const cancelled = () => new ClientClosedError('The compaction was cancelled: the client went away.');
    await new Promise<void>((resolve, reject) => {
      if (options.signal?.aborted) return reject(cancelled());
      const subscription = this.upstream.infer(request).subscribe({
        next: (event) => {
          if (event.type === 'message.done') texts.push(event.text);
          else if (event.type === 'usage') addUsage(usage, event.usage);
        },
        error: reject,
        complete: resolve,
      });
      options.signal?.addEventListener(
        'abort',
        () => {
          subscription.unsubscribe();
          reject(cancelled());
        },
        { once: true },
      );
    });
    const summary = texts.join('\n').trim();
    if (!summary) throw new UpstreamUnavailableError('The upstream model returned no summary text for the compaction.', 'compaction_failed');
    return { summary, usage };
  }
}
