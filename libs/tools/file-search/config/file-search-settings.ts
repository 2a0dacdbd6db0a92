import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsObject, IsOptional, IsString, Max, Min, MinLength, ValidateNested } from 'class-validator';
import { classSectionKeys, defineConfigSection, type GatewayConfig } from '#tool-sdk/index.js';

export const FILE_SEARCH_SETTINGS = Symbol('FILE_SEARCH_SETTINGS');

/** Where the upstream's `/v1/embeddings` is and how it is called. */
export interface EmbeddingSettings {
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Inputs per `/v1/embeddings` request. */
  batchSize: number;
  /** Sent as `dimensions` when set (models with Matryoshka heads). */
  dimensions?: number;
  timeoutMs: number;
}

export interface FileSearchSettings {
  /**
   * The SQLite file of the index when the state is on SQLite; unset, it is
   * `files.sqlite` beside the state file. On PostgreSQL the index is in the
   * state's database (the `ToolStorage` port).
   */
  sqlitePath?: string;
  /** Unset: lexical (BM25) retrieval only. */
  embeddings?: EmbeddingSettings;
  maxFileBytes: number;
  /** Files one owner may hold (Files API); past it an upload is a 403 `quota_exceeded`. */
  maxFilesPerOwner: number;
  /** Bytes of files one owner may hold. */
  maxBytesPerOwner: number;
  /** Queries one `file_search` call or one search request may carry. */
  maxQueriesPerSearch: number;
  /** Characters of results the model reads per call. */
  resultBudgetChars: number;
  ingestion: {
    /** False: this replica serves the API but claims no jobs (another replica does). */
    enabled: boolean;
    concurrency: number;
    pollMs: number;
    /** A claimed job whose worker went silent this long is claimed again. */
    leaseMs: number;
    /** A file whose text takes longer to extract fails (`invalid_file`) rather than holding a worker. */
    extractTimeoutMs: number;
    /** Claims of one job at most: a job whose process died or hung this often is failed, never claimed again. */
    maxAttempts: number;
    /** Heap of one ingestion thread. */
    threadMemoryMb: number;
    /** Tokens one file may have (OpenAI's limit is 5,000,000). */
    maxTokensPerFile: number;
    /** HTML nested deeper than this fails `invalid_file`. */
    maxHtmlDepth: number;
    /** Nice value of the ingestion threads (0 to 19): background work yields the CPU to requests. */
    niceness: number;
    /** Bytes a document's compressed streams (PDF, DOCX) may inflate to, all together; past it the file fails `invalid_file` before it is parsed. */
    maxInflatedBytes: number;
    /** Extraction threads one owner's files and `input_file` parts may hold at once; unset: `concurrency - 1` (at least 1). */
    threadsPerOwner?: number;
    /** An extraction thread (and the chunk writer) left this long without a job ends; the next job starts one. */
    threadIdleMs: number;
  };
}

export class FileSearchSettingsError extends Error {}

/** `fileSearch.embeddings` as written: unset, retrieval is lexical (BM25) only. */
export class EmbeddingsSection {
  /** Unset: the upstream's base URL (and its key). */
  @IsOptional() @IsString() @MinLength(1) baseUrl?: string;
  @IsOptional() @IsString() @MinLength(1) apiKey?: string;
  /** Required once the section is given (`requiredModel`). */
  @IsOptional() @IsString() @MinLength(1) model?: string;
  @IsInt() @Min(1) @Max(2048) batchSize = 64;
  @IsOptional() @IsInt() @Min(1) @Max(65536) dimensions?: number;
  @IsInt() @Min(100) @Max(3_600_000) timeoutMs = 60_000;
}

/** `fileSearch.ingestion` as written. */
export class IngestionSection {
  @IsBoolean() enabled = true;
  @IsInt() @Min(1) @Max(64) concurrency = 2;
  @IsInt() @Min(10) @Max(3_600_000) pollMs = 1000;
  @IsInt() @Min(100) @Max(86_400_000) leaseMs = 300_000;
  @IsInt() @Min(100) @Max(86_400_000) extractTimeoutMs = 120_000;
  @IsInt() @Min(1) @Max(100) maxAttempts = 3;
  @IsInt() @Min(64) @Max(65_536) threadMemoryMb = 1024;
  @IsInt() @Min(1) @Max(1_000_000_000) maxTokensPerFile = 5_000_000;
  @IsInt() @Min(16) @Max(1_000_000) maxHtmlDepth = 1024;
  /** Nice value of the ingestion threads (0 to 19), so a large batch yields the CPU to requests. */
  @IsInt() @Min(0) @Max(19) niceness = 10;
  /** Inflated bytes of a document's compressed streams, together: a small file that inflates past it (a flate bomb) fails fast. */
  @IsInt() @Min(1024) @Max(2 ** 31 - 1) maxInflatedBytes = 64 * 1024 * 1024;
  /** Extraction threads one owner may hold; unset leaves one of `concurrency` free for other owners. */
  @IsOptional() @IsInt() @Min(1) @Max(64) threadsPerOwner?: number;
  /** An idle extraction thread holds its parsers and tokenizer (tens of MiB): it ends after this long without a job. */
  @IsInt() @Min(100) @Max(86_400_000) threadIdleMs = 30_000;
}

/** `fileSearch` as written; storage follows the gateway's `storage` section (see `parseFileSearchSettings`). */
export class FileSearchSection {
  @IsOptional() @IsString() @MinLength(1) sqlitePath?: string;
  @IsInt() @Min(1) @Max(2 ** 31 - 1) maxFileBytes = 64 * 1024 * 1024;
  @IsInt() @Min(1) @Max(100_000_000) maxFilesPerOwner = 10_000;
  @IsInt() @Min(1) @Max(Number.MAX_SAFE_INTEGER) maxBytesPerOwner = 2 * 1024 ** 3;
  @IsInt() @Min(1) @Max(1000) maxQueriesPerSearch = 100;
  @IsInt() @Min(1000) @Max(10_000_000) resultBudgetChars = 24_000;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => EmbeddingsSection) embeddings?: EmbeddingsSection;
  @IsObject() @ValidateNested() @Type(() => IngestionSection) ingestion = new IngestionSection();
}

function requiredModel(section: FileSearchSection): string[] {
  const e = section.embeddings;
  return e && typeof e === 'object' && e.model === undefined ? ['fileSearch.embeddings.model: is required when fileSearch.embeddings is set'] : [];
}

/**
 * The settings the module uses: embeddings on the upstream's URL and key
 * unless given their own. Where the index lives follows the gateway's own
 * `storage` section (`ToolStorage`).
 */
function resolvedSettings(section: FileSearchSection, config: GatewayConfig): FileSearchSettings {
  const e = section.embeddings;
  const embeddings: EmbeddingSettings | undefined = e?.model
    ? {
        baseUrl: (e.baseUrl ?? config.upstream.baseUrl).replace(/\/+$/, ''),
        apiKey: e.apiKey ?? config.upstream.apiKey,
        model: e.model,
        batchSize: e.batchSize,
        dimensions: e.dimensions,
        timeoutMs: e.timeoutMs,
      }
    : undefined;
  const { ingestion } = section;
  return {
    sqlitePath: section.sqlitePath,
    embeddings,
    maxFileBytes: section.maxFileBytes,
    maxFilesPerOwner: section.maxFilesPerOwner,
    maxBytesPerOwner: section.maxBytesPerOwner,
    maxQueriesPerSearch: section.maxQueriesPerSearch,
    resultBudgetChars: section.resultBudgetChars,
    ingestion: { ...ingestion },
  };
}

/** The `fileSearch` section: its database, the embeddings endpoint, and ingestion. */
export const fileSearchConfigSection = defineConfigSection({
  key: 'fileSearch',
  type: FileSearchSection,
  token: FILE_SEARCH_SETTINGS,
  env: [
    { env: 'FILE_SEARCH_EMBEDDING_MODEL', path: 'embeddings.model', kind: 'string' },
    { env: 'FILE_SEARCH_EMBEDDING_BASE_URL', path: 'embeddings.baseUrl', kind: 'string' },
    { env: 'FILE_SEARCH_EMBEDDING_API_KEY', path: 'embeddings.apiKey', kind: 'string', secret: true },
    { env: 'FILE_SEARCH_EMBEDDING_BATCH_SIZE', path: 'embeddings.batchSize', kind: 'int' },
    { env: 'FILE_SEARCH_EMBEDDING_DIMENSIONS', path: 'embeddings.dimensions', kind: 'int' },
    { env: 'FILE_SEARCH_EMBEDDING_TIMEOUT_MS', path: 'embeddings.timeoutMs', kind: 'int' },
    { env: 'FILE_SEARCH_INGESTION_CONCURRENCY', path: 'ingestion.concurrency', kind: 'int' },
    { env: 'FILE_SEARCH_INGESTION_NICENESS', path: 'ingestion.niceness', kind: 'int' },
    { env: 'FILES_MAX_PER_OWNER', path: 'maxFilesPerOwner', kind: 'int' },
    { env: 'FILES_MAX_BYTES_PER_OWNER', path: 'maxBytesPerOwner', kind: 'int' },
  ],
  // `embeddings` has no default to read its keys from.
  keys: { ...classSectionKeys(FileSearchSection), embeddings: classSectionKeys(EmbeddingsSection) },
  check: requiredModel,
  settings: resolvedSettings,
});

/** `config.fileSearch`, validated, for code outside the Nest container. */
export function parseFileSearchSettings(config: GatewayConfig): FileSearchSettings {
  try {
    return fileSearchConfigSection.read(config);
  } catch (err) {
    throw new FileSearchSettingsError((err as Error).message);
  }
}
