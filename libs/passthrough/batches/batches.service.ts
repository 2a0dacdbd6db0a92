import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ConflictError, DriverMissingError, InvalidRequestError, NotFoundError, TooManyInFlightError } from '#tool-sdk/errors.js';
import { BATCH_FILES, type BatchFiles } from '#tool-sdk/ports/batch-files.interface.js';
import { parseBatchInput } from './batch-input.parser.js';
import { batchObject } from './batch-object.js';
import type { BatchRow } from './batch-rows.js';
import { BatchStore } from './batch.store.js';
import { BATCHES_SETTINGS, type BatchesConfig } from './batches.config-section.js';
import { BatchRunner } from './batch-runner.service.js';

/** The endpoints a batch line may call; each runs through the same code as its HTTP route. */
export const BATCH_ENDPOINTS = ['/v1/responses', '/v1/chat/completions', '/v1/completions', '/v1/embeddings'];

const WINDOW_MS = 24 * 3600 * 1000;
let lastSeq = 0;
const nextSeq = (): number => (lastSeq = Math.max(Date.now() * 1000, lastSeq + 1));
const ownerKey = (owner: string | null): string => owner ?? '';

export function batchNotFound(id: string): NotFoundError {
  return new NotFoundError(`No batch found with id '${id}'.`, 'batch_not_found', 'batch_id');
}

function metadataOf(raw: unknown): Record<string, string> | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new InvalidRequestError('metadata must be an object of strings.', 'metadata', 'invalid_type');
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > 16) throw new InvalidRequestError('metadata holds at most 16 keys.', 'metadata', 'invalid_value');
  for (const [key, value] of entries) {
    if (key.length > 64) throw new InvalidRequestError('metadata keys are at most 64 characters.', `metadata.${key.slice(0, 64)}`, 'invalid_value');
    if (typeof value !== 'string' || value.length > 512)
      throw new InvalidRequestError('metadata values are strings of at most 512 characters.', `metadata.${key}`, 'invalid_value');
  }
  return raw as Record<string, string>;
}

/**
 * `POST /v1/batches` and its reads: the input file is read through the Files
 * API's port and parsed in a thread; a file with a bad line fails the batch
 * with errors naming each line, as OpenAI does; a good one is stored with
 * one row per request, and the runner (on every process sharing the store)
 * takes it from there.
 */
@Injectable()
export class BatchesService {
  constructor(
    private readonly store: BatchStore,
    private readonly runner: BatchRunner,
    private readonly moduleRef: ModuleRef,
    @Inject(BATCHES_SETTINGS) private readonly settings: BatchesConfig,
  ) {}

  /** Without its database driver the store never opened: every batch route says so. */
  private open(): BatchStore {
    if (!this.store.ready) {
      throw new DriverMissingError(
        'better-sqlite3',
        'batches',
        'Batches need the package better-sqlite3 (an optional peer dependency) for this storage driver: npm install better-sqlite3',
      );
    }
    return this.store;
  }

  private files(): BatchFiles {
    let files: BatchFiles | undefined;
    try {
      files = this.moduleRef.get<BatchFiles>(BATCH_FILES, { strict: false });
    } catch {
      files = undefined;
    }
    if (!files) throw new InvalidRequestError('Batches need the Files API (the file_search module), which this gateway does not load.', 'input_file_id', 'unsupported');
    return files;
  }

  async create(body: unknown, owner: string | null): Promise<Record<string, unknown>> {
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new InvalidRequestError('The request body must be a JSON object.', null);
    const b = body as Record<string, unknown>;
    if (typeof b.endpoint !== 'string' || !BATCH_ENDPOINTS.includes(b.endpoint)) {
      throw new InvalidRequestError(`endpoint must be one of ${BATCH_ENDPOINTS.join(', ')}.`, 'endpoint', 'invalid_value');
    }
    if (b.completion_window !== '24h') throw new InvalidRequestError("completion_window must be '24h'.", 'completion_window', 'invalid_value');
    if (typeof b.input_file_id !== 'string' || b.input_file_id === '') throw new InvalidRequestError('input_file_id must be a file id.', 'input_file_id', 'invalid_type');
    const metadata = metadataOf(b.metadata);
    const key = ownerKey(owner);
    if ((await this.open().liveCount(key)) >= this.settings.maxLiveBatchesPerOwner) {
      throw new TooManyInFlightError(
        `You have ${this.settings.maxLiveBatchesPerOwner} batches running (batches.maxLiveBatchesPerOwner); wait for one to finish.`,
        null,
        'too_many_batches',
      );
    }
    const file = await this.files().read(b.input_file_id, owner);
    if (!file) throw new NotFoundError(`No such File object: ${b.input_file_id}`, 'file_not_found', 'input_file_id');
    if (file.purpose !== 'batch')
      throw new InvalidRequestError(`The input file must be uploaded with purpose 'batch' (this one is '${file.purpose}').`, 'input_file_id', 'invalid_file');
    const parsed = await parseBatchInput(file.data, b.endpoint, this.settings.maxRequestsPerBatch);
    const now = Date.now();
    const createdAt = Math.floor(now / 1000);
    const batch: BatchRow = {
      id: `batch_${randomBytes(12).toString('hex')}`,
      owner: key,
      seq: nextSeq(),
      status: parsed.errors ? 'failed' : 'in_progress',
      endpoint: b.endpoint,
      total: parsed.requests?.length ?? 0,
      completed: 0,
      failed: 0,
      expiresAt: now + WINDOW_MS,
      doc: parsed.errors
        ? { input_file_id: b.input_file_id, completion_window: '24h', created_at: createdAt, metadata, errors: parsed.errors, failed_at: createdAt }
        : { input_file_id: b.input_file_id, completion_window: '24h', created_at: createdAt, metadata, model: parsed.model, in_progress_at: createdAt },
    };
    await this.store.insert(batch, parsed.requests ?? []);
    if (!parsed.errors) this.runner.wake();
    return batchObject(batch);
  }

  async get(id: string, owner: string | null): Promise<Record<string, unknown>> {
    const batch = await this.open().get(id, ownerKey(owner));
    if (!batch) throw batchNotFound(id);
    return batchObject(batch);
  }

  async list(owner: string | null, query: Record<string, unknown>): Promise<Record<string, unknown>> {
    const limit = query.limit === undefined ? 20 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new InvalidRequestError('limit must be an integer from 1 to 100.', 'limit', 'invalid_value');
    if (query.after !== undefined && typeof query.after !== 'string') throw new InvalidRequestError('after must be a batch id.', 'after', 'invalid_type');
    const page = await this.open().list(ownerKey(owner), query.after as string | undefined, limit);
    const data = page.rows.map(batchObject);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore };
  }

  async cancel(id: string, owner: string | null): Promise<Record<string, unknown>> {
    const batch = await this.open().cancel(id, ownerKey(owner), Math.floor(Date.now() / 1000));
    if (!batch) throw batchNotFound(id);
    if (batch.status !== 'cancelling') {
      throw new ConflictError(`Cannot cancel a batch whose status is '${batch.status}'.`, 'batch_id', 'batch_not_cancellable');
    }
    this.runner.cancelled(id);
    return batchObject(batch);
  }
}
