import { dirname, join } from 'node:path';
import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsObject, IsOptional, IsString, Max, Min, MinLength, ValidateNested } from 'class-validator';
import { classSectionKeys, parseClassSection } from '#config/class-config-section.js';
import { type GatewayConfig, type KeyShape, type StorageConfig, parseStorageSettings, readStorageSettings } from '#src/tool-contract.js';

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
  /** `sqlite` (a file, or `:memory:`) or `postgres`; follows `storage.driver` unless set. */
  driver: 'sqlite' | 'postgres';
  sqlitePath: string;
  postgresUrl?: string;
  /** The state store's `storage.connectTimeoutMs` / `storage.queryTimeoutMs`: an outage answers 503 within them on every route. */
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
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

/** The keys of `fileSearch`, read from the classes. */
export const FILE_SEARCH_KEYS: KeyShape = {
  ...(classSectionKeys(FileSearchSection) as Record<string, KeyShape>),
  embeddings: classSectionKeys(EmbeddingsSection),
  ingestion: classSectionKeys(IngestionSection),
};

function requiredModel(section: FileSearchSection): string[] {
  const e = section.embeddings;
  return e && typeof e === 'object' && e.model === undefined ? ['fileSearch.embeddings.model: is required when fileSearch.embeddings is set'] : [];
}

/**
 * The state store's settings, which file search follows. A mistake in them is
 * the `storage` section's to report (once, naming its variable); file search
 * then validates its own settings against the defaults.
 */
function storageSettingsOf(config: GatewayConfig): StorageConfig {
  try {
    return readStorageSettings(config);
  } catch {
    return parseStorageSettings(undefined);
  }
}

/**
 * `config.fileSearch`, validated when the module's providers are built so
 * that a bad value stops the boot with the setting's name. Storage follows
 * the gateway's own `storage` section: the same PostgreSQL database, or a
 * `files.sqlite` next to the state file (`:memory:` for the memory driver).
 */
export function parseFileSearchSettings(config: GatewayConfig): FileSearchSettings {
  let section: FileSearchSection;
  try {
    section = parseClassSection('fileSearch', FileSearchSection, config.fileSearch ?? undefined, requiredModel);
  } catch (err) {
    throw new FileSearchSettingsError((err as Error).message);
  }
  const storage = storageSettingsOf(config);
  const driver = storage?.driver === 'postgres' ? 'postgres' : 'sqlite';
  const statePath = storage?.sqlitePath ?? '.switchyard/state.sqlite';
  const defaultPath = storage?.driver === 'memory' || statePath === ':memory:' ? ':memory:' : join(dirname(statePath), 'files.sqlite');
  if (driver === 'postgres' && !storage?.postgresUrl) throw new FileSearchSettingsError('storage.postgresUrl is required for file search on PostgreSQL.');
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
    driver,
    sqlitePath: section.sqlitePath ?? defaultPath,
    postgresUrl: storage?.postgresUrl,
    connectTimeoutMs: storage?.connectTimeoutMs,
    queryTimeoutMs: storage?.queryTimeoutMs,
    embeddings,
    maxFileBytes: section.maxFileBytes,
    maxFilesPerOwner: section.maxFilesPerOwner,
    maxBytesPerOwner: section.maxBytesPerOwner,
    maxQueriesPerSearch: section.maxQueriesPerSearch,
    resultBudgetChars: section.resultBudgetChars,
    ingestion: { ...ingestion },
  };
}
