import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InvalidRequestError, NotFoundError } from '#tool-sdk/index.js';
import { FILE_SEARCH_SETTINGS, type FileSearchSettings } from '../config/file-search-settings.js';
import { IngestionWorker } from '../ingestion/ingestion.worker.js';
import { parseAttributeFilter } from '../retrieval/attribute-filter.js';
import { FileSearchService } from '../retrieval/file-search.service.js';
import { rewriteQuery } from '../retrieval/query-terms.js';
import type { ChunkingStrategy, Owner, PageQuery, StoreFileRow, StoreFileStatus, VectorStoreRow } from '../storage/file-search-rows.js';
import { FileSearchStore, nextSeq } from '../storage/file-search.store.js';
import { fileNotFound } from './files.service.js';
import { batchObject, listObject, storeFileObject, storeObject } from './public-objects.js';
import { MAX_FILE_IDS, asBody, attributes, chunkingStrategy, fileIdList, metadata, optionalInt, optionalString, storeExpiresAfter } from './request-fields.js';

const nowSeconds = (): number => Math.floor(Date.now() / 1000);
const hex = (): string => randomBytes(12).toString('hex');
const STATUSES: StoreFileStatus[] = ['in_progress', 'completed', 'failed', 'cancelled'];

export function storeNotFound(id: string, param: string | null = null): NotFoundError {
  return new NotFoundError(`No vector store found with id '${id}'.`, 'vector_store_not_found', param);
}

interface FileSpec {
  fileId: string;
  attributes: StoreFileRow['attributes'];
  chunking: ChunkingStrategy;
}

/**
 * The Vector Stores API: stores, their files, file batches and search.
 * Every operation names the request's owner; another owner's store, and
 * every file and batch in it, answers 404 as if it did not exist.
 */
@Injectable()
export class VectorStoresService {
  constructor(
    private readonly store: FileSearchStore,
    private readonly worker: IngestionWorker,
    private readonly retrieval: FileSearchService,
    @Inject(FILE_SEARCH_SETTINGS) private readonly settings: FileSearchSettings,
  ) {}

  // ---- stores -------------------------------------------------------------

  async create(owner: Owner, raw: unknown): Promise<Record<string, unknown>> {
    const body = asBody(raw);
    const chunking = chunkingStrategy(body.chunking_strategy, 'chunking_strategy');
    const fileIds = body.file_ids === undefined ? [] : fileIdList(body.file_ids, 'file_ids');
    const now = nowSeconds();
    const row: VectorStoreRow = {
      id: `vs_${hex()}`,
      owner,
      name: optionalString(body, 'name', 256) ?? null,
      description: optionalString(body, 'description', 512) ?? null,
      metadata: metadata(body.metadata, 'metadata') ?? {},
      createdAt: now,
      seq: nextSeq(),
      lastActiveAt: now,
      expiresAfter: storeExpiresAfter(body.expires_after, 'expires_after') ?? null,
    };
    await this.requireFiles(owner, fileIds, 'file_ids');
    await this.store.insertStore(row);
    await this.store.addStoreFiles(fileIds.map((fileId) => this.newStoreFile(row.id, { fileId, attributes: {}, chunking }, null)));
    if (fileIds.length > 0) this.worker.kick();
    return this.storeView(row);
  }

  async requireStore(owner: Owner, id: string, param: string | null = null): Promise<VectorStoreRow> {
    const s = await this.store.getStore(id, owner);
    if (!s) throw storeNotFound(id, param);
    return s;
  }

  private async storeView(row: VectorStoreRow): Promise<Record<string, unknown>> {
    const stats = await this.store.storeStats([row.id]);
    return storeObject(row, stats.get(row.id)!, nowSeconds());
  }

  async get(owner: Owner, id: string): Promise<Record<string, unknown>> {
    return this.storeView(await this.requireStore(owner, id));
  }

  async list(owner: Owner, q: PageQuery): Promise<Record<string, unknown>> {
    const page = await this.store.listStores(q, owner);
    const stats = await this.store.storeStats(page.rows.map((r) => r.id));
    const now = nowSeconds();
    return listObject(page, (r) => storeObject(r, stats.get(r.id)!, now));
  }

  async update(owner: Owner, id: string, raw: unknown): Promise<Record<string, unknown>> {
    const body = asBody(raw);
    const row = await this.requireStore(owner, id);
    if ('name' in body) row.name = optionalString(body, 'name', 256) ?? null;
    const meta = metadata(body.metadata, 'metadata');
    if (meta !== undefined) row.metadata = meta;
    const expires = storeExpiresAfter(body.expires_after, 'expires_after');
    if (expires !== undefined) row.expiresAfter = expires;
    row.lastActiveAt = nowSeconds();
    await this.store.updateStore(row);
    return this.storeView(row);
  }

  async delete(owner: Owner, id: string): Promise<Record<string, unknown>> {
    await this.requireStore(owner, id);
    await this.store.deleteStore(id, owner);
    return { id, object: 'vector_store.deleted', deleted: true };
  }

  // ---- files in a store ---------------------------------------------------

  private newStoreFile(storeId: string, spec: FileSpec, batchId: string | null): StoreFileRow {
    return {
      storeId,
      fileId: spec.fileId,
      batchId,
      status: 'in_progress',
      lastError: null,
      attributes: spec.attributes,
      chunking: spec.chunking,
      usageBytes: 0,
      createdAt: nowSeconds(),
      seq: nextSeq(),
      attempts: 0,
    };
  }

  /** Every id must name a live file of the owner; the first missing one is reported with its index. */
  private async requireFiles(owner: Owner, ids: readonly string[], path: string): Promise<void> {
    const found = new Set((await this.store.getFiles(ids, owner)).filter((f) => f.expiresAt === null || f.expiresAt > nowSeconds()).map((f) => f.id));
    const missing = ids.findIndex((id) => !found.has(id));
    if (missing >= 0) throw fileNotFound(ids[missing], `${path}[${missing}]`);
  }

  async addFile(owner: Owner, storeId: string, raw: unknown): Promise<Record<string, unknown>> {
    const body = asBody(raw);
    await this.requireStore(owner, storeId);
    const fileId = optionalString(body, 'file_id', 256);
    if (!fileId) throw new InvalidRequestError('file_id is required.', 'file_id');
    const spec: FileSpec = { fileId, attributes: attributes(body.attributes, 'attributes'), chunking: chunkingStrategy(body.chunking_strategy, 'chunking_strategy') };
    const file = await this.store.getFile(fileId, owner);
    if (!file || (file.expiresAt !== null && file.expiresAt <= nowSeconds())) throw fileNotFound(fileId, 'file_id');
    await this.store.addStoreFiles([this.newStoreFile(storeId, spec, null)]);
    this.worker.kick();
    return storeFileObject((await this.store.getStoreFile(storeId, fileId))!);
  }

  private async requireStoreFile(owner: Owner, storeId: string, fileId: string): Promise<StoreFileRow> {
    await this.requireStore(owner, storeId);
    const f = await this.store.getStoreFile(storeId, fileId);
    if (!f) throw new NotFoundError(`No file found with id '${fileId}' in vector store '${storeId}'.`, 'file_not_found');
    return f;
  }

  async getFile(owner: Owner, storeId: string, fileId: string): Promise<Record<string, unknown>> {
    return storeFileObject(await this.requireStoreFile(owner, storeId, fileId));
  }

  async listFiles(owner: Owner, storeId: string, q: PageQuery, filter: unknown, batchId?: string): Promise<Record<string, unknown>> {
    await this.requireStore(owner, storeId);
    if (filter !== undefined && !STATUSES.includes(filter as StoreFileStatus)) {
      throw new InvalidRequestError(`filter must be one of ${STATUSES.join(', ')}.`, 'filter');
    }
    const page = await this.store.listStoreFiles(storeId, q, { status: filter as StoreFileStatus | undefined, batchId });
    return listObject(page, storeFileObject);
  }

  async updateFile(owner: Owner, storeId: string, fileId: string, raw: unknown): Promise<Record<string, unknown>> {
    const body = asBody(raw);
    if (!('attributes' in body)) throw new InvalidRequestError('attributes is required.', 'attributes');
    const attrs = attributes(body.attributes, 'attributes');
    await this.requireStoreFile(owner, storeId, fileId);
    await this.store.updateAttributes(storeId, fileId, attrs);
    return storeFileObject((await this.store.getStoreFile(storeId, fileId))!);
  }

  async deleteFile(owner: Owner, storeId: string, fileId: string): Promise<Record<string, unknown>> {
    await this.requireStoreFile(owner, storeId, fileId);
    await this.store.deleteStoreFile(storeId, fileId);
    return { id: fileId, object: 'vector_store.file.deleted', deleted: true };
  }

  async fileContent(owner: Owner, storeId: string, fileId: string): Promise<Record<string, unknown>> {
    await this.requireStoreFile(owner, storeId, fileId);
    const texts = await this.store.chunkTexts(storeId, fileId);
    return { object: 'vector_store.file_content.page', data: texts.map((text) => ({ type: 'text', text })), has_more: false, next_page: null };
  }

  // ---- batches ------------------------------------------------------------

  async createBatch(owner: Owner, storeId: string, raw: unknown): Promise<Record<string, unknown>> {
    const body = asBody(raw);
    await this.requireStore(owner, storeId);
    let specs: FileSpec[];
    if (body.files !== undefined) {
      if (body.file_ids !== undefined) throw new InvalidRequestError('Give either file_ids or files, not both.', 'files');
      if (!Array.isArray(body.files) || body.files.length === 0) throw new InvalidRequestError('files must be a non-empty array.', 'files');
      if (body.files.length > MAX_FILE_IDS) throw new InvalidRequestError(`files may list at most ${MAX_FILE_IDS} files.`, 'files');
      specs = body.files.map((f, i) => {
        const entry = asBody(f);
        const fileId = entry.file_id;
        if (typeof fileId !== 'string' || fileId === '') throw new InvalidRequestError(`files[${i}].file_id is required.`, `files[${i}].file_id`);
        return {
          fileId,
          attributes: attributes(entry.attributes, `files[${i}].attributes`),
          chunking: chunkingStrategy(entry.chunking_strategy, `files[${i}].chunking_strategy`),
        };
      });
      const seen = new Set<string>();
      specs = specs.filter((s) => !seen.has(s.fileId) && seen.add(s.fileId));
      await this.requireFiles(
        owner,
        specs.map((s) => s.fileId),
        'files',
      );
    } else {
      const ids = fileIdList(body.file_ids, 'file_ids');
      if (ids.length === 0) throw new InvalidRequestError('file_ids must list at least one file.', 'file_ids');
      const attrs = attributes(body.attributes, 'attributes');
      const chunking = chunkingStrategy(body.chunking_strategy, 'chunking_strategy');
      specs = ids.map((fileId) => ({ fileId, attributes: attrs, chunking }));
      await this.requireFiles(owner, ids, 'file_ids');
    }
    const batch = { id: `vsfb_${hex()}`, storeId, createdAt: nowSeconds(), cancelled: false };
    await this.store.insertBatch(
      batch,
      specs.map((s) => this.newStoreFile(storeId, s, batch.id)),
    );
    this.worker.kick();
    return batchObject(batch, await this.store.batchCounts(batch.id));
  }

  private async requireBatch(owner: Owner, storeId: string, batchId: string) {
    await this.requireStore(owner, storeId);
    const b = await this.store.getBatch(batchId);
    if (!b || b.storeId !== storeId) throw new NotFoundError(`No file batch found with id '${batchId}' in vector store '${storeId}'.`, 'batch_not_found');
    return b;
  }

  async getBatch(owner: Owner, storeId: string, batchId: string): Promise<Record<string, unknown>> {
    const b = await this.requireBatch(owner, storeId, batchId);
    return batchObject(b, await this.store.batchCounts(b.id));
  }

  async cancelBatch(owner: Owner, storeId: string, batchId: string): Promise<Record<string, unknown>> {
    const b = await this.requireBatch(owner, storeId, batchId);
    const counts = await this.store.batchCounts(b.id);
    // A batch that already finished stays as it was, as OpenAI's does.
    if (counts.in_progress > 0) {
      await this.store.cancelBatch(b.id);
      b.cancelled = true;
    }
    return batchObject(b, await this.store.batchCounts(b.id));
  }

  async listBatchFiles(owner: Owner, storeId: string, batchId: string, q: PageQuery, filter: unknown): Promise<Record<string, unknown>> {
    await this.requireBatch(owner, storeId, batchId);
    return this.listFiles(owner, storeId, q, filter, batchId);
  }

  // ---- search -------------------------------------------------------------

  async search(owner: Owner, storeId: string, raw: unknown, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const body = asBody(raw);
    const store = await this.requireStore(owner, storeId);
    const query = body.query;
    let queries: string[];
    if (typeof query === 'string') queries = [query];
    else if (Array.isArray(query)) {
      if (query.length > this.settings.maxQueriesPerSearch) {
        throw new InvalidRequestError(`query may list at most ${this.settings.maxQueriesPerSearch} queries (got ${query.length}).`, 'query');
      }
      query.forEach((q, i) => {
        if (typeof q !== 'string') throw new InvalidRequestError(`query[${i}] must be a string.`, `query[${i}]`);
      });
      queries = query as string[];
    } else throw new InvalidRequestError('query is required: a string or an array of strings.', 'query');
    queries = queries.map((q) => q.trim()).filter(Boolean);
    if (queries.length === 0) throw new InvalidRequestError('query must contain some text.', 'query');
    const maxNumResults = optionalInt(body, 'max_num_results', 1, 50) ?? 10;
    const filter = body.filters === undefined || body.filters === null ? undefined : parseAttributeFilter(body.filters, 'filters');
    const ranking = parseRankingOptions(body.ranking_options, 'ranking_options', this.retrieval.mode === 'hybrid');
    if (body.rewrite_query !== undefined && typeof body.rewrite_query !== 'boolean') throw new InvalidRequestError('rewrite_query must be a boolean.', 'rewrite_query');
    const searched = body.rewrite_query ? queries.map(rewriteQuery) : queries;
    const results = await this.retrieval.search({ storeIds: [store.id], queries: searched, filter, maxNumResults, ...ranking, signal });
    await this.store.touchStores([store.id], nowSeconds());
    return {
      object: 'vector_store.search_results.page',
      search_query: searched,
      data: results.map((r) => ({ file_id: r.fileId, filename: r.filename, score: r.score, attributes: r.attributes, content: [{ type: 'text', text: r.text }] })),
      has_more: false,
      next_page: null,
    };
  }
}

/**
 * Rankers OpenAI names. The gateway has one ranking (BM25 of chunk and file,
 * fused with embeddings when configured) and no separate reranking stage, so
 * each of these means that ranking; any other value is refused rather than
 * ignored.
 */
export const RANKERS = ['auto', 'default-2024-11-15', 'none'] as const;

const RANKING_FIELDS = new Set(['ranker', 'score_threshold', 'hybrid_search']);

/**
 * `ranking_options` of the search API and of the tool declaration. Every
 * field is honoured or refused: an unknown field, an unknown ranker, and
 * `hybrid_search` weights on a gateway without embeddings (it could only
 * rank lexically, whatever the weights said) are 400s naming the field.
 */
export function parseRankingOptions(raw: unknown, path: string, hybridAvailable: boolean): { scoreThreshold: number; weights?: { text: number; embedding: number } } {
  if (raw === undefined || raw === null) return { scoreThreshold: 0 };
  const r = asBody(raw);
  for (const key of Object.keys(r)) {
    if (!RANKING_FIELDS.has(key)) throw new InvalidRequestError(`${path}.${key} is not a ranking option (they are ${[...RANKING_FIELDS].join(', ')}).`, `${path}.${key}`);
  }
  if (r.ranker !== undefined && r.ranker !== null && !(RANKERS as readonly unknown[]).includes(r.ranker)) {
    throw new InvalidRequestError(`${path}.ranker must be one of ${RANKERS.map((x) => `"${x}"`).join(', ')}.`, `${path}.ranker`);
  }
  let scoreThreshold = 0;
  if (r.score_threshold !== undefined) {
    if (typeof r.score_threshold !== 'number' || !(r.score_threshold >= 0 && r.score_threshold <= 1)) {
      throw new InvalidRequestError(`${path}.score_threshold must be a number from 0 to 1.`, `${path}.score_threshold`);
    }
    scoreThreshold = r.score_threshold;
  }
  if (r.hybrid_search === undefined || r.hybrid_search === null) return { scoreThreshold };
  if (!hybridAvailable) {
    throw new InvalidRequestError(
      `${path}.hybrid_search needs embeddings, and this gateway ranks file search lexically only (no fileSearch.embeddings model is configured).`,
      `${path}.hybrid_search`,
    );
  }
  const h = asBody(r.hybrid_search);
  const weight = (field: string): number => {
    const v = h[field];
    if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v))
      throw new InvalidRequestError(`${path}.hybrid_search.${field} must be a non-negative number.`, `${path}.hybrid_search.${field}`);
    return v;
  };
  const weights = { embedding: weight('embedding_weight'), text: weight('text_weight') };
  if (weights.embedding + weights.text === 0) throw new InvalidRequestError(`${path}.hybrid_search weights may not both be 0.`, `${path}.hybrid_search`);
  return { scoreThreshold, weights };
}
