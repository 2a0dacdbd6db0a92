import { Inject, Injectable } from '@nestjs/common';
import { UPSTREAM_CLIENT, type UpstreamClient } from '../upstream/upstream-client.interface.js';
import type { ModelRequest } from '../protocol/model-events.js';
import { estimateImageTokens } from './image-token-estimate.js';

/** How long a model list that lacked a model (or failed) is trusted before asking again. */
const RETRY_AFTER_MS = 60_000;
/** Reading the model list must not hold a request up for long; without an answer nothing is clamped. */
const LIST_TIMEOUT_MS = 5_000;

/**
 * Context lengths of the upstream's models, as its `/v1/models` reports them
 * (`max_model_len`, vLLM's and SGLang's field). Read once and kept: a model's
 * context does not change while the server runs. A model the list does not
 * describe, or a list that fails, means "unknown" and is asked again at most
 * once a minute.
 */
@Injectable()
export class ModelContextService {
  private readonly lengths = new Map<string, number>();
  private listedAt = Number.NEGATIVE_INFINITY;
  private listing?: Promise<void>;

  constructor(@Inject(UPSTREAM_CLIENT) private readonly upstream: UpstreamClient) {}

  async contextLength(model: string): Promise<number | null> {
    const known = this.lengths.get(model);
    if (known !== undefined) return known;
    if (Date.now() - this.listedAt >= RETRY_AFTER_MS) await this.list();
    return this.lengths.get(model) ?? null;
  }

  private list(): Promise<void> {
    // Concurrent first requests share one model-list call.
    this.listing ??= this.upstream
      .listModels(AbortSignal.timeout(LIST_TIMEOUT_MS))
      .then(
        (models) => {
          for (const model of models) {
            const length = model.max_model_len;
            if (typeof length === 'number' && Number.isInteger(length) && length > 0) this.lengths.set(model.id, length);
          }
        },
        () => undefined,
      )
      .finally(() => {
        this.listedAt = Date.now();
        this.listing = undefined;
      });
    return this.listing;
  }
}

/**
 * Serialized sizes of transcript items and tools: a run's transcript only
 * grows, so each item is measured once. A cache of what `bytesOf` computes
 * from the item alone (items are not changed once in a transcript, and a
 * kept list's functions are frozen), not state a layer leaves for another:
 * a miss measures again. Its callers are the round's budget fitting
 * (round.ts), which would own a per-run table if it passed one.
 */
const jsonBytes = new WeakMap<object, number>();

function bytesOf(value: object): number {
  let bytes = jsonBytes.get(value);
  if (bytes === undefined) {
    // An image is counted at what a vision model spends on it, not at the size of its base64.
    let imageBytes = 0;
    const json = JSON.stringify(value, (key, v: unknown) => {
      if (key !== 'image_url' || typeof v !== 'string') return v;
      imageBytes += estimateImageTokens(v) * 3;
      return '';
    });
    bytes = Buffer.byteLength(json, 'utf8') + imageBytes;
    jsonBytes.set(value, bytes);
  }
  return bytes;
}

/**
 * A deliberately high token estimate of what the upstream will tokenize: the
 * UTF-8 size of the JSON of instructions, input and tools, three bytes per
 * token. That is three ASCII characters per token and one per CJK character
 * (about what tokenizers give for CJK text). Images, wherever they sit (a
 * message, a tool's output), count as `estimateImageTokens` says. Overestimating only shortens
 * the budget; underestimating gets the request refused by the model server.
 */
/** One item's share of `estimatePromptTokens`. */
export function estimateItemTokens(item: object): number {
  return Math.ceil(bytesOf(item) / 3);
}

export function estimatePromptTokens(request: Pick<ModelRequest, 'instructions' | 'input' | 'tools'>): number {
  let bytes = Buffer.byteLength(request.instructions ?? '', 'utf8');
  for (const item of request.input) bytes += bytesOf(item);
  for (const tool of request.tools) bytes += bytesOf(tool);
  return Math.ceil(bytes / 3);
}

/**
 * The output budget that fits the context after the prompt: a model server
 * refuses `max_output_tokens` larger than that (vLLM: 400 "max_tokens is too
 * large") instead of shortening it, and clients written for hosted models send
 * budgets bigger than a self-hosted model's whole context.
 *
 * Never below a useful floor (`usefulOutputFloor`): when the prompt seems to
 * leave less than that, the budget is left as asked and the model server, who
 * counts the prompt exactly, has the last word. A budget cut to a handful of
 * tokens on an estimate that ran high (the 3-bytes-a-token estimate overcounts
 * plain text about 1.3x) only ends the answer at once; the model server's
 * refusal instead says by how much it was over, and the edges pass that on in
 * the shape clients act on (Claude Code retries with a smaller `max_tokens`).
 */
export function clampOutputBudget(requested: number | null | undefined, contextLength: number | null, promptTokens: number): number | null {
  if (requested === null || requested === undefined || contextLength === null) return requested ?? null;
  const fits = contextLength - promptTokens;
  if (fits >= requested) return requested;
  return fits >= usefulOutputFloor(requested, contextLength) ? fits : requested;
}

/** The least budget worth clamping to: 1024 tokens, less for small requests and small contexts (an eighth of it). */
export function usefulOutputFloor(requested: number, contextLength: number): number {
  return Math.max(1, Math.min(requested, 1024, Math.floor(contextLength / 8)));
}
