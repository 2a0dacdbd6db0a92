import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { FILE_SEARCH_SETTINGS, type FileSearchSettings } from '../config/file-search-settings.js';
import type { ClaimedJob, FileRow, NewChunk } from '../storage/file-search-rows.js';
import { FileSearchStore } from '../storage/file-search.store.js';
import { EmbeddingError, EmbeddingsClient } from './embeddings.client.js';
import { ExtractionPool } from './extraction-pool.js';
import { DEFAULT_LIMITS, ExtractionError } from './ingestion-contract.js';

export const FILE_SEARCH_EMBEDDINGS = Symbol('FILE_SEARCH_EMBEDDINGS');

/** Ingestion threads run below the event loop's priority unless configured otherwise (`ingestion.niceness`). */
export const DEFAULT_INGESTION_NICENESS = 10;

/**
 * Background ingestion: claims waiting store files (see
 * `FileSearchStore.claimJob`), extracts, chunks, embeds and writes them.
 * Jobs are rows, so they outlive the process; a job whose worker died is
 * claimed again when its lease runs out, and one this worker was holding at
 * shutdown is handed back at once.
 */
@Injectable()
export class IngestionWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly logger = new Logger('FileSearchIngestion');
  private running = false;
  private readonly active = new Map<string, { job: ClaimedJob; done: Promise<void> }>();
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private readonly stop = new AbortController();
  /** Files are extracted, tokenized and chunked in threads of their own, one per concurrent job at most. */
  private readonly parsers: ExtractionPool;

  constructor(
    private readonly store: FileSearchStore,
    @Inject(FILE_SEARCH_SETTINGS) private readonly settings: FileSearchSettings,
    @Inject(FILE_SEARCH_EMBEDDINGS) private readonly embeddings: EmbeddingsClient | null,
  ) {
    const { concurrency, threadMemoryMb, maxTokensPerFile, maxHtmlDepth, niceness, maxInflatedBytes, threadsPerOwner, threadIdleMs } = settings.ingestion;
    this.parsers = new ExtractionPool({
      size: concurrency,
      threadsPerOwner,
      niceness: niceness ?? DEFAULT_INGESTION_NICENESS,
      writer: store.threadWritableFile !== undefined && embeddings === null,
      idleMs: threadIdleMs,
      memoryMb: threadMemoryMb ?? 1024,
      limits: {
        ...DEFAULT_LIMITS,
        maxTokens: maxTokensPerFile ?? DEFAULT_LIMITS.maxTokens,
        maxHtmlDepth: maxHtmlDepth ?? DEFAULT_LIMITS.maxHtmlDepth,
        maxInflatedBytes: maxInflatedBytes ?? DEFAULT_LIMITS.maxInflatedBytes,
      },
    });
  }

  onApplicationBootstrap(): void {
    // No store (its driver is not installed): there is nothing to ingest into.
    if (!this.settings.ingestion.enabled || !this.store.ready) return;
    this.running = true;
    this.loop = this.run();
  }

  /**
   * A document's whole text, for a message's `input_file` part: the same
   * thread pool, extractors and caps (token limit, HTML depth, deadline) as
   * indexing, as one chunk as long as the token cap. It waits in `owner`'s
   * queue, so another owner's backlog of files does not delay it.
   */
  async extractText(filename: string, bytes: Buffer, owner = ''): Promise<string> {
    const { maxTokensPerFile } = this.settings.ingestion;
    const whole = { maxChunkSizeTokens: maxTokensPerFile ?? DEFAULT_LIMITS.maxTokens, chunkOverlapTokens: 0, auto: false };
    return (await this.parsers.prepare(filename, bytes, whole, this.settings.ingestion.extractTimeoutMs, owner)).map((chunk) => chunk.text).join('');
  }

  /** New work was queued here: look now rather than at the next poll. */
  kick(): void {
    this.wake?.();
  }

  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    this.stop.abort();
    this.wake?.();
    // Parses in flight end here; their jobs are handed back, not failed.
    await this.parsers.close();
    await this.loop;
    await Promise.all([...this.active.values()].map((a) => a.done));
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = false;
      while (this.running && this.active.size < this.settings.ingestion.concurrency) {
        let job: ClaimedJob | undefined;
        try {
          job = await this.store.claimJob(this.workerId, Date.now(), this.settings.ingestion.leaseMs, this.settings.ingestion.maxAttempts, this.ownersAtShare());
        } catch (e) {
          if (this.running) this.logger.warn(`claiming an ingestion job failed: ${(e as Error).message}`);
          break;
        }
        if (!job) break;
        claimed = true;
        const key = `${job.storeId}/${job.fileId}`;
        const done = this.process(job).finally(() => {
          this.active.delete(key);
          this.wake?.();
        });
        this.active.set(key, { job, done });
      }
      if (!this.running) break;
      if (claimed && this.active.size < this.settings.ingestion.concurrency) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.settings.ingestion.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /**
   * Owners whose jobs here already hold their share of the extraction
   * threads: their next file is not claimed yet, so a slot this worker has
   * goes to another owner's file rather than to a job that would only wait.
   */
  private ownersAtShare(): string[] {
    const held = new Map<string, number>();
    for (const { job } of this.active.values()) held.set(job.owner, (held.get(job.owner) ?? 0) + 1);
    return [...held].filter(([, n]) => n >= this.parsers.threadsPerOwner).map(([owner]) => owner);
  }

  private async process(job: ClaimedJob): Promise<void> {
    const renew = setInterval(
      () => {
        this.store.renewLease(job, this.workerId, Date.now() + this.settings.ingestion.leaseMs).catch(() => undefined);
      },
      Math.max(50, Math.floor(this.settings.ingestion.leaseMs / 3)),
    );
    try {
      const file = this.store.threadWritableFile;
      // With embeddings, the chunks' texts go to the embeddings endpoint from here, and their rows are written here too.
      if (file && !this.embeddings) await this.ingestInThread(job, file);
      else await this.ingestHere(job);
    } catch (e) {
      if (this.stop.signal.aborted) {
        await this.store.releaseJob(job, this.workerId).catch(() => undefined);
        return;
      }
      const error =
        e instanceof ExtractionError
          ? { code: e.code, message: e.message }
          : { code: 'server_error', message: e instanceof EmbeddingError ? e.message : `Ingestion failed: ${(e as Error).message}` };
      const detail = e instanceof EmbeddingError && e.detail ? ` (${e.detail})` : '';
      if (!(e instanceof ExtractionError)) this.logger.warn(`${job.fileId} in ${job.storeId}: ${error.message}${detail}`);
      await this.store.failJob(job, this.workerId, error).catch(() => undefined);
    } finally {
      clearInterval(renew);
    }
  }

  /**
   * SQLite: the thread that prepares the file hands its chunks to the pool's
   * writer thread, which writes them and completes the job through a
   * connection of its own, so a large file's hundreds of thousands of index
   * rows never run on the event loop. A shutdown ends the threads, which
   * rolls a write in progress back; the job is handed back.
   */
  private async ingestInThread(job: ClaimedJob, databaseFile: string): Promise<void> {
    const { file, content } = await this.fileOf(job);
    await this.parsers.prepareAndWrite(
      file.filename,
      content,
      job.chunking,
      this.settings.ingestion.extractTimeoutMs,
      { file: databaseFile, storeId: job.storeId, fileId: job.fileId, worker: this.workerId },
      job.owner,
    );
  }

  /** PostgreSQL, SQLite `:memory:`, or chunks with embeddings: chunks come back here and are written through the store. */
  private async ingestHere(job: ClaimedJob): Promise<void> {
    const chunks = await this.prepare(job);
    if (this.stop.signal.aborted) return void (await this.store.releaseJob(job, this.workerId));
    const usageBytes = chunks.reduce((n, c) => n + Buffer.byteLength(c.text) + (c.embedding?.byteLength ?? 0), 0);
    await this.store.completeJob(job, this.workerId, chunks, usageBytes);
  }

  private async fileOf(job: ClaimedJob): Promise<{ file: FileRow; content: Buffer }> {
    const found = await this.store.fileForIngestion(job.fileId);
    if (!found) throw new ExtractionError('invalid_file', `File ${job.fileId} no longer exists.`);
    return found;
  }

  private async prepare(job: ClaimedJob): Promise<NewChunk[]> {
    const { file, content } = await this.fileOf(job);
    const pieces = await this.parsers.prepare(file.filename, content, job.chunking, this.settings.ingestion.extractTimeoutMs, job.owner);
    if (pieces.length === 0) throw new ExtractionError('invalid_file', `${file.filename} contains no text to index.`);
    const vectors = this.embeddings
      ? await this.embeddings.embed(
          pieces.map((p) => p.text),
          this.stop.signal,
        )
      : [];
    return pieces.map(({ text, terms }, position) => ({ position, text, terms, embedding: vectors[position] }));
  }
}
