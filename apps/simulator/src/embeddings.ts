import { createHash, randomUUID } from 'node:crypto';

/**
 * `/v1/embeddings` as vLLM serves it for an embedding model: deterministic
 * vectors, vLLM's request checks and its response shape (`embd-` ids,
 * `object: "list"`, `usage` with `completion_tokens: 0`).
 *
 * The vectors are hashed character trigrams of each word (with word
 * boundaries), L2-normalised: texts that share words or word stems point the
 * same way, which is what a retrieval test needs from an embedding, and the
 * same text always gets the same vector. It is not a language model and
 * knows no synonyms.
 */
export const DEFAULT_EMBEDDING_DIMENSIONS = 256;

export class EmbeddingRequestError extends Error {
  constructor(
    message: string,
    readonly param: string | null,
  ) {
    super(message);
  }
}

function bucket(feature: string, dims: number): { index: number; sign: number } {
  const h = createHash('md5').update(feature).digest();
  return { index: h.readUInt32LE(0) % dims, sign: h[4] & 1 ? 1 : -1 };
}

/** The words of a text as the simulator's "model" sees them. */
function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Memoised per feature: hashing dominates, and corpora repeat their words. */
const featureCache = new Map<string, Array<{ index: number; sign: number }>>();

function featuresOf(word: string, dims: number): Array<{ index: number; sign: number }> {
  const key = `${dims}:${word}`;
  let cached = featureCache.get(key);
  if (!cached) {
    const padded = `<${word}>`;
    cached = [bucket(`w:${word}`, dims)];
    for (let i = 0; i + 3 <= padded.length; i++) cached.push(bucket(`t:${padded.slice(i, i + 3)}`, dims));
    if (featureCache.size > 200_000) featureCache.clear();
    featureCache.set(key, cached);
  }
  return cached;
}

export function embedText(text: string, dims = DEFAULT_EMBEDDING_DIMENSIONS): number[] {
  const v = new Float64Array(dims);
  for (const w of words(text)) for (const f of featuresOf(w, dims)) v[f.index] += f.sign;
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  // An empty text gets a fixed unit vector, as a real model gives some vector for any input.
  if (norm === 0) return Array.from({ length: dims }, (_, i) => (i === 0 ? 1 : 0));
  return Array.from(v, (x) => Math.fround(x / norm));
}

function tokenCount(input: string | number[]): number {
  return typeof input === 'string' ? Math.max(1, input.split(/\s+/).filter(Boolean).length) : input.length;
}

/** The request's inputs: a string, strings, token ids, or lists of token ids (as vLLM accepts). */
function inputsOf(body: Record<string, unknown>): Array<string | number[]> {
  const input = body.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0) {
    if (input.every((x) => typeof x === 'string')) return input as string[];
    if (input.every((x) => Number.isInteger(x))) return [input as number[]];
    if (input.every((x) => Array.isArray(x) && x.every(Number.isInteger))) return input as number[][];
  }
  throw new EmbeddingRequestError('input must be a string, an array of strings, or token ids', 'input');
}

export function embeddingsBody(body: unknown, model: string, nativeDims = DEFAULT_EMBEDDING_DIMENSIONS): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new EmbeddingRequestError('Request body must be a JSON object', null);
  const b = body as Record<string, unknown>;
  if (typeof b.model !== 'string' || b.model === '') throw new EmbeddingRequestError('model is required', 'model');
  if (b.model !== model) throw new EmbeddingRequestError(`The model \`${b.model}\` does not exist.`, 'model');
  const inputs = inputsOf(b);
  const format = b.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') throw new EmbeddingRequestError("encoding_format must be 'float' or 'base64'", 'encoding_format');
  let dims = nativeDims;
  if (b.dimensions !== undefined && b.dimensions !== null) {
    // Served as a Matryoshka-capable model: narrower vectors on request.
    if (!Number.isInteger(b.dimensions) || (b.dimensions as number) < 1 || (b.dimensions as number) > nativeDims) {
      throw new EmbeddingRequestError(`dimensions must be an integer from 1 to ${nativeDims}`, 'dimensions');
    }
    dims = b.dimensions as number;
  }
  const data = inputs.map((input, index) => {
    // Hashed into the requested width directly: every width gets a full unit vector.
    const vector = embedText(typeof input === 'string' ? input : input.join(' '), dims);
    const embedding = format === 'base64' ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector;
    return { index, object: 'embedding', embedding };
  });
  const prompt = inputs.reduce((n, input) => n + tokenCount(input), 0);
  return {
    id: `embd-${randomUUID().replace(/-/g, '')}`,
    object: 'list',
    created: Math.floor(Date.now() / 1000),
    model,
    data,
    usage: { prompt_tokens: prompt, total_tokens: prompt, completion_tokens: 0, prompt_tokens_details: null },
  };
}
