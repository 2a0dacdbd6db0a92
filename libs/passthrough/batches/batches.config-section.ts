import { IsInt, IsNumber, Max, Min } from 'class-validator';
import { defineConfigSection } from '#config/config-section.js';

/** `batches`: how `POST /v1/batches` jobs run on this gateway. */
export class BatchesConfig {
  /** Requests of batches one gateway process runs at once (each replica and worker runs its own share). */
  @IsInt() @Min(1) @Max(256) maxConcurrentRequests = 4;
  /**
   * The share of time batch lines get while this process serves interactive
   * model requests (or did within the last 200 ms): lines then run one at a
   * time, and after a line that took t ms the next starts t*(1/share - 1) ms
   * later. 0 holds batch lines back until clients are gone; 1 runs one line
   * after another. Batches are background work: they step aside for clients.
   */
  @IsNumber() @Min(0) @Max(1) shareUnderLoad = 0.2;
  /** Lines one batch may hold (OpenAI's limit). */
  @IsInt() @Min(1) @Max(1_000_000) maxRequestsPerBatch = 50_000;
  /** Batches one owner may have running (validating, in progress, finalizing, cancelling) at once. */
  @IsInt() @Min(1) maxLiveBatchesPerOwner = 100;
  /** How long a process's claim on a request (or on finalizing a batch) holds without renewal; a crashed process's claims lapse after it. */
  @IsInt() @Min(500) leaseMs = 30_000;
  /** How often an idle process looks for claimable work (new batches on this process start at once). */
  @IsInt() @Min(20) pollMs = 500;
  /** Claims of one request before it is given up as failed (its runs kept being cut off by a stopping process). */
  @IsInt() @Min(1) @Max(100) maxAttempts = 3;
}

export const BATCHES_SETTINGS = Symbol('BATCHES_SETTINGS');

export const batchesConfigSection = defineConfigSection({
  key: 'batches',
  type: BatchesConfig,
  token: BATCHES_SETTINGS,
  env: [{ env: 'BATCH_MAX_CONCURRENT_REQUESTS', path: 'maxConcurrentRequests', kind: 'int' }],
});
