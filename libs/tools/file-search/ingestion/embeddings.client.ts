import type { EmbeddingSettings } from '../config/file-search-settings.js';

/** `message` is what the file's owner reads (`last_error`); `detail`, with the endpoint's address, only the log. */
export class EmbeddingError extends Error {
  override readonly name = 'EmbeddingError';
  constructor(
    message: string,
    readonly detail: string | null = null,
  ) {
    super(message);
  }
}

/**
 * The upstream's OpenAI-compatible `/v1/embeddings` (vLLM serves it for
 * embedding models). Inputs go in batches of `batchSize`; the answer's
 * `index` fields, not its order, say which vector is whose.
 */
export class EmbeddingsClient {
  constructor(private readonly settings: EmbeddingSettings) {}

  async embed(inputs: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < inputs.length; i += this.settings.batchSize) {
      out.push(...(await this.embedBatch(inputs.slice(i, i + this.settings.batchSize), signal)));
    }
    return out;
  }

  private async embedBatch(input: string[], outer?: AbortSignal): Promise<Float32Array[]> {
    const signal = outer ? AbortSignal.any([outer, AbortSignal.timeout(this.settings.timeoutMs)]) : AbortSignal.timeout(this.settings.timeoutMs);
    const body: Record<string, unknown> = { model: this.settings.model, input, encoding_format: 'float' };
    if (this.settings.dimensions !== undefined) body.dimensions = this.settings.dimensions;
    let res: Response;
    try {
      res = await fetch(`${this.settings.baseUrl}/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal,
      });
    } catch (e) {
      const cause = (e as Error & { cause?: Error }).cause?.message;
      throw new EmbeddingError('The embeddings endpoint is unreachable.', `${this.settings.baseUrl}/embeddings: ${(e as Error).message}${cause ? ` (${cause})` : ''}`);
    }
    const text = await res.text();
    if (!res.ok) throw new EmbeddingError(`The embeddings endpoint answered ${res.status}: ${text.slice(0, 300)}`);
    let parsed: { data?: Array<{ index?: number; embedding?: unknown }> };
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new EmbeddingError('The embeddings endpoint answered something that is not JSON.');
    }
    const data = parsed.data;
    if (!Array.isArray(data) || data.length !== input.length) {
      throw new EmbeddingError(`The embeddings endpoint returned ${Array.isArray(data) ? data.length : 'no'} vectors for ${input.length} inputs.`);
    }
    const vectors: Float32Array[] = new Array(input.length);
    for (const [position, d] of data.entries()) {
      const index = typeof d.index === 'number' ? d.index : position;
      if (!Array.isArray(d.embedding) || index < 0 || index >= input.length) throw new EmbeddingError('The embeddings endpoint returned a malformed vector.');
      vectors[index] = Float32Array.from(d.embedding as number[]);
    }
    return vectors;
  }
}
