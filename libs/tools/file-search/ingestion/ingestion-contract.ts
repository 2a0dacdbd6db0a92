import type { ChunkingStrategy } from '../storage/file-search-rows.js';

/**
 * What the gateway's main thread needs to know about ingestion, and nothing
 * that loads a parser or the tokenizer: those live in the ingestion thread
 * (`thread/ingest-thread.mjs`) alone. The request path imports this module.
 */

/** OpenAI's `auto` strategy. */
export const AUTO_CHUNKING: ChunkingStrategy = { maxChunkSizeTokens: 800, chunkOverlapTokens: 400, auto: true };

/** Why a file yields no chunks; the codes are OpenAI's `last_error.code` values. */
export class ExtractionError extends Error {
  constructor(
    readonly code: 'unsupported_file' | 'invalid_file',
    message: string,
  ) {
    super(message);
    this.name = 'ExtractionError';
  }
}

/** The bounds every file is prepared within (see the ingestion thread). */
export interface PreparationLimits {
  /** HTML nested deeper than this is refused before it is converted. */
  maxHtmlDepth: number;
  /** Runs of spaces or non-spaces longer than this are cut before tokenizing, so tokenizing stays linear. */
  maxRunChars: number;
  /** A file with more tokens than this is refused (OpenAI's limit is 5,000,000 per file). */
  maxTokens: number;
  /**
   * Bytes a PDF's or DOCX's compressed streams may inflate to, together,
   * checked before the parser runs: a 400 KB PDF whose page stream inflates
   * to 200 MB is refused in the time it takes to inflate the cap, not after
   * the parser has chewed through all of it.
   */
  maxInflatedBytes: number;
}

export const DEFAULT_LIMITS: PreparationLimits = { maxHtmlDepth: 1024, maxRunChars: 256, maxTokens: 5_000_000, maxInflatedBytes: 64 * 1024 * 1024 };
