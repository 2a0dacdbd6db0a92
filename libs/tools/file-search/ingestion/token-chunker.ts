import { decode, encode } from 'gpt-tokenizer';
import type { ChunkingStrategy } from '../storage/file-search-rows.js';

/** OpenAI's `auto` strategy. */
export const AUTO_CHUNKING: ChunkingStrategy = { maxChunkSizeTokens: 800, chunkOverlapTokens: 400, auto: true };

/**
 * Token windows of `maxChunkSizeTokens`, each starting `max - overlap`
 * tokens after the previous one (o200k tokens, the encoding of OpenAI's
 * current models; counts are close enough for other tokenizers' budgets).
 * Linear in the text: one encode, then slices.
 */
export function chunkText(text: string, strategy: ChunkingStrategy): string[] {
  const tokens = encode(text);
  if (tokens.length === 0) return [];
  const step = Math.max(1, strategy.maxChunkSizeTokens - strategy.chunkOverlapTokens);
  const chunks: string[] = [];
  for (let start = 0; start < tokens.length; start += step) {
    const piece = decode(tokens.slice(start, start + strategy.maxChunkSizeTokens)).trim();
    if (piece) chunks.push(piece);
    if (start + strategy.maxChunkSizeTokens >= tokens.length) break;
  }
  return chunks;
}
