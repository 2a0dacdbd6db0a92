import type { GatewayConfig } from '#tool-sdk/index.js';

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
  };
}

export class FileSearchSettingsError extends Error {}

type Raw = Record<string, unknown>;

function section(raw: Raw, key: string): Raw {
  const value = raw[key];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new FileSearchSettingsError(`fileSearch.${key} must be an object.`);
  return value as Raw;
}

function int(raw: Raw, key: string, path: string, fallback: number, min: number, max: number): number {
  const value = raw[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new FileSearchSettingsError(`${path}.${key} must be an integer from ${min} to ${max}.`);
  }
  return value;
}

function str(raw: Raw, key: string, path: string): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new FileSearchSettingsError(`${path}.${key} must be a non-empty string.`);
  return value;
}

/**
 * `config.fileSearch`, validated when the module's providers are built so
 * that a bad value stops the boot with the setting's name. Where the index
 * lives follows the gateway's own `storage` section (`ToolStorage`).
 */
export function parseFileSearchSettings(config: GatewayConfig): FileSearchSettings {
  const raw = (config.fileSearch ?? {}) as Raw;

  let embeddings: EmbeddingSettings | undefined;
  const e = section(raw, 'embeddings');
  const model = str(e, 'model', 'fileSearch.embeddings');
  if (model !== undefined) {
    embeddings = {
      baseUrl: (str(e, 'baseUrl', 'fileSearch.embeddings') ?? config.upstream.baseUrl).replace(/\/+$/, ''),
      apiKey: str(e, 'apiKey', 'fileSearch.embeddings') ?? config.upstream.apiKey,
      model,
      batchSize: int(e, 'batchSize', 'fileSearch.embeddings', 64, 1, 2048),
      dimensions: e.dimensions === undefined ? undefined : int(e, 'dimensions', 'fileSearch.embeddings', 0, 1, 65536),
      timeoutMs: int(e, 'timeoutMs', 'fileSearch.embeddings', 60_000, 100, 3_600_000),
    };
  } else if (Object.keys(e).length > 0) {
    throw new FileSearchSettingsError('fileSearch.embeddings.model is required when fileSearch.embeddings is set.');
  }

  const ingestion = section(raw, 'ingestion');
  const enabled = ingestion.enabled ?? true;
  if (typeof enabled !== 'boolean') throw new FileSearchSettingsError('fileSearch.ingestion.enabled must be a boolean.');
  return {
    sqlitePath: str(raw, 'sqlitePath', 'fileSearch'),
    embeddings,
    maxFileBytes: int(raw, 'maxFileBytes', 'fileSearch', 64 * 1024 * 1024, 1, 2 ** 31 - 1),
    maxFilesPerOwner: int(raw, 'maxFilesPerOwner', 'fileSearch', 10_000, 1, 100_000_000),
    maxBytesPerOwner: int(raw, 'maxBytesPerOwner', 'fileSearch', 2 * 1024 ** 3, 1, Number.MAX_SAFE_INTEGER),
    maxQueriesPerSearch: int(raw, 'maxQueriesPerSearch', 'fileSearch', 100, 1, 1000),
    resultBudgetChars: int(raw, 'resultBudgetChars', 'fileSearch', 24_000, 1000, 10_000_000),
    ingestion: {
      enabled,
      concurrency: int(ingestion, 'concurrency', 'fileSearch.ingestion', 2, 1, 64),
      pollMs: int(ingestion, 'pollMs', 'fileSearch.ingestion', 1000, 10, 3_600_000),
      leaseMs: int(ingestion, 'leaseMs', 'fileSearch.ingestion', 300_000, 100, 86_400_000),
      extractTimeoutMs: int(ingestion, 'extractTimeoutMs', 'fileSearch.ingestion', 120_000, 100, 86_400_000),
      maxAttempts: int(ingestion, 'maxAttempts', 'fileSearch.ingestion', 3, 1, 100),
      threadMemoryMb: int(ingestion, 'threadMemoryMb', 'fileSearch.ingestion', 1024, 64, 65_536),
      maxTokensPerFile: int(ingestion, 'maxTokensPerFile', 'fileSearch.ingestion', 5_000_000, 1, 1_000_000_000),
      maxHtmlDepth: int(ingestion, 'maxHtmlDepth', 'fileSearch.ingestion', 1024, 16, 1_000_000),
      niceness: int(ingestion, 'niceness', 'fileSearch.ingestion', 10, 0, 19),
    },
  };
}
