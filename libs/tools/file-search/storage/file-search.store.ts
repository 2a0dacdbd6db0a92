import { textTerms } from '../retrieval/text-terms.js';
import type {
  Attributes,
  BatchRow,
  ChunkHit,
  ChunkTerms,
  ChunkingStrategy,
  ClaimedJob,
  FileCounts,
  FileRow,
  NewChunk,
  Owner,
  Page,
  PageQuery,
  RankedChunk,
  StoreFileRow,
  StoreFileStatus,
  VectorStoreRow,
} from './file-search-rows.js';
import { chunkWrites } from './chunk-writes.js';
import { migrateFileSearch } from './file-search.migrations.js';
import type { Row, SqlDatabase, SqlValue } from '#tool-sdk/index.js';

const num = (v: unknown): number => Number(v);
const json = <T>(v: unknown, fallback: T): T => (typeof v === 'string' ? (JSON.parse(v) as T) : fallback);

function fileRow(r: Row): FileRow {
  return {
    id: String(r.id),
    owner: String(r.owner ?? ''),
    filename: String(r.filename),
    purpose: String(r.purpose),
    bytes: num(r.bytes),
    createdAt: num(r.created_at),
    seq: num(r.seq),
    expiresAt: r.expires_at === null || r.expires_at === undefined ? null : num(r.expires_at),
  };
}

function storeRow(r: Row): VectorStoreRow {
  return {
    id: String(r.id),
    owner: String(r.owner ?? ''),
    name: (r.name as string | null) ?? null,
    description: (r.description as string | null) ?? null,
    metadata: json(r.metadata, {}),
    createdAt: num(r.created_at),
    seq: num(r.seq),
    lastActiveAt: num(r.last_active_at),
    expiresAfter: json(r.expires_after, null),
  };
}

function storeFileRow(r: Row): StoreFileRow {
  return {
    storeId: String(r.store_id),
    fileId: String(r.file_id),
    batchId: (r.batch_id as string | null) ?? null,
    status: r.status as StoreFileStatus,
    lastError: json(r.last_error, null),
    attributes: json(r.attributes, {}),
    chunking: json(r.chunking, { maxChunkSizeTokens: 800, chunkOverlapTokens: 400, auto: true }),
    usageBytes: num(r.usage_bytes),
    createdAt: num(r.created_at),
    seq: num(r.seq),
    attempts: num(r.attempts),
  };
}

function toBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

export function fromBlob(b: Buffer): Float32Array {
  // Copy: a Buffer from a driver may sit at an unaligned offset of a shared pool.
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Float32Array(copy.buffer);
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** What a search ranks: the stores, narrowed to listed files when attribute filters ran. */
export interface SearchScope {
  storeIds: readonly string[];
  fileKeys?: ReadonlyArray<{ storeId: string; fileId: string }>;
}

const FILE_COLUMNS = 'id, owner, filename, purpose, bytes, created_at, seq, expires_at';

const isEmpty = (scope: SearchScope): boolean => scope.storeIds.length === 0 || (scope.fileKeys !== undefined && scope.fileKeys.length === 0);

/** `IN (?, ?, ...)` for a list; a list is never empty here (callers return early). */
const marks = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/** BM25's usual constants: term-frequency saturation and length normalisation. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * How much a chunk's file counts in its lexical rank beside the chunk itself
 * (both as shares of their ideal BM25). Tuned on the odd-numbered questions
 * of the Debian man-page collection, checked on the others and on Cranfield
 * (bench/README.md).
 */
export const FILE_WEIGHT = 1.5;

/**
 * SQL for the share of a file's summed chunk lengths (and term counts) that
 * counts each word once, for `chunks` windows overlapping by `overlap` of
 * their size: the file holds about 1 + (chunks − 1)(1 − overlap) windows'
 * worth of words, and its chunks sum to `chunks` windows.
 */
const DEDUP = (chunks: string, overlap: string): string => `((1 + (CAST(${chunks} AS DOUBLE PRECISION) - 1) * (1 - ${overlap})) / CAST(${chunks} AS DOUBLE PRECISION))`;

/** Lucene's BM25 idf: positive for every term, largest for a term no chunk has. */
export const idf = (chunks: number, df: number): number => Math.log(1 + (chunks - df + 0.5) / (df + 0.5));

/** Index rows per INSERT: few statements, well under either database's bound on parameters. */
const POSTINGS_PER_STATEMENT = 250;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Chunks and index entries deleted per statement while purging: each statement is short, and the event loop runs between them. */
const PURGE_BATCH_CHUNKS = 500;
const PURGE_BATCH_POSTINGS = 5_000;

/** What one `fs_purges` row removes: a store's or a file's chunks (or one file's in one store), up to a chunk id. */
interface PurgeRow {
  id: unknown;
  store_id: string;
  file_id: string;
  up_to: unknown;
}

/**
 * Records, inside the deleting transaction, that the chunks of `storeId`
 * and/or `fileId` ('' for a side not narrowed) that exist now are to be
 * removed. Chunk ids only grow, so `up_to` (the largest now) keeps a file
 * added again to the same store out of it.
 */
async function recordPurge(t: SqlDatabase, storeId: string, fileId: string): Promise<void> {
  const [top] = await t.all<{ up_to: unknown }>('SELECT COALESCE(MAX(id), 0) AS up_to FROM fs_chunks');
  await t.run('INSERT INTO fs_purges (store_id, file_id, up_to, created_at) VALUES (?, ?, ?, ?)', [storeId, fileId, num(top.up_to), Date.now()]);
}

/** The `WHERE` of a purge row over a table whose chunk id column is `chunkColumn`. */
function purgeScope(row: PurgeRow, chunkColumn: string): { where: string; params: SqlValue[] } {
  const clauses: string[] = [];
  const params: SqlValue[] = [];
  if (row.file_id !== '') {
    clauses.push('file_id = ?');
    params.push(row.file_id);
  }
  if (row.store_id !== '') {
    clauses.push('store_id = ?');
    params.push(row.store_id);
  }
  clauses.push(`${chunkColumn} <= ?`);
  params.push(num(row.up_to));
  return { where: clauses.join(' AND '), params };
}

/** Writes one chunk's index entries, a few hundred rows per statement. */
async function insertPostings(t: SqlDatabase, storeId: string, fileId: string, chunkId: number, terms: ChunkTerms): Promise<void> {
  for (let i = 0; i < terms.counts.length; i += POSTINGS_PER_STATEMENT) {
    const slice = terms.counts.slice(i, i + POSTINGS_PER_STATEMENT);
    const params: SqlValue[] = [];
    for (const [term, tf] of slice) params.push(storeId, term, chunkId, fileId, tf, terms.length);
    await t.run(`INSERT INTO fs_postings (store_id, term, chunk_id, file_id, tf, len) VALUES ${slice.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`, params);
  }
}

/**
 * Insertion order for listings. Seconds (OpenAI's `created_at`) tie often;
 * a per-process monotonic microsecond counter orders rows created in the
 * same second and stays roughly ordered across replicas.
 */
let lastSeq = 0;
export function nextSeq(): number {
  lastSeq = Math.max(Date.now() * 1000, lastSeq + 1);
  return lastSeq;
}

/**
 * Everything file search keeps: files (with their bytes), vector stores,
 * the files in them (each row doubling as its ingestion job), batches and
 * chunks with their lexical index and embeddings. One implementation over
 * SQLite and PostgreSQL; the dialects differ only in ranking and claiming.
 */
export class FileSearchStore {
  /** False until the tables are in place (and while the database driver is not installed). */
  ready = false;

  /** See `FILE_WEIGHT`; settable for the retrieval bench's tuning runs. */
  fileWeight = FILE_WEIGHT;

  /** The purge loop while it runs, and whether a purge was recorded since it last looked. */
  private purging?: Promise<void>;
  private purgeAgain = false;
  private closing = false;

  constructor(readonly db: SqlDatabase) {}

  async init(): Promise<void> {
    await migrateFileSearch(this.db);
    await this.indexOlderChunks();
    this.ready = true;
    // Deletions a stopped process left half done continue, in the background like any other.
    this.purgeSoon();
  }

  /**
   * Chunks written before the store-local index (schema version 3) get
   * their entries, a batch per transaction; a database without such chunks
   * costs one indexed lookup.
   */
  private async indexOlderChunks(): Promise<void> {
    const analyzer = await textTerms();
    for (;;) {
      const rows = await this.db.all<{ id: unknown; store_id: string; file_id: string; text: string }>(
        'SELECT id, store_id, file_id, text FROM fs_chunks WHERE terms IS NULL LIMIT 200',
      );
      if (rows.length === 0) return;
      await this.db.tx(async (t) => {
        for (const r of rows) {
          const terms = analyzer.termCounts(r.text);
          await t.run('DELETE FROM fs_postings WHERE store_id = ? AND file_id = ? AND chunk_id = ?', [r.store_id, r.file_id, num(r.id)]);
          await insertPostings(t, r.store_id, r.file_id, num(r.id), terms);
          await t.run('UPDATE fs_chunks SET terms = ? WHERE id = ?', [terms.length, num(r.id)]);
        }
      });
      await yieldToEventLoop();
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    // The loop stops at its next batch; what it leaves stays recorded for the next start.
    await this.purging;
    await this.db.close();
  }

  // ---- purging deleted content ---------------------------------------------

  /**
   * Removes the chunks and index entries of every recorded deletion, in
   * batches of a few hundred or thousand rows with the event loop running
   * between them: a file of millions of index entries took one statement of
   * seconds, during which the process (every tenant's requests) stood
   * still. Resolves when nothing recorded is left. Other processes may purge
   * the same rows at once; deleting is idempotent.
   */
  purgePending(): Promise<void> {
    this.purgeAgain = true;
    this.purging ??= this.runPurges().finally(() => (this.purging = undefined));
    return this.purging;
  }

  /** `purgePending` for a caller that does not wait: a failure (an outage) is retried by the next deletion or start. */
  private purgeSoon(): void {
    this.purgePending().catch(() => undefined);
  }

  private async runPurges(): Promise<void> {
    while (this.purgeAgain && !this.closing) {
      this.purgeAgain = false;
      const rows = await this.db.all<PurgeRow>('SELECT id, store_id, file_id, up_to FROM fs_purges ORDER BY id');
      for (const row of rows) {
        if (this.closing) return;
        if (!(await this.purge(row))) return;
        await this.db.run('DELETE FROM fs_purges WHERE id = ?', [num(row.id)]);
      }
    }
  }

  /** One recorded deletion, batch by batch; false when closing stopped it first. */
  private async purge(row: PurgeRow): Promise<boolean> {
    const postings = purgeScope(row, 'chunk_id');
    const chunks = purgeScope(row, 'id');
    const batches = [
      {
        sql: `DELETE FROM fs_postings WHERE (store_id, term, chunk_id) IN (SELECT store_id, term, chunk_id FROM fs_postings WHERE ${postings.where} LIMIT ${PURGE_BATCH_POSTINGS})`,
        params: postings.params,
      },
      { sql: `DELETE FROM fs_chunks WHERE id IN (SELECT id FROM fs_chunks WHERE ${chunks.where} LIMIT ${PURGE_BATCH_CHUNKS})`, params: chunks.params },
    ];
    for (const batch of batches) {
      for (;;) {
        if (this.closing) return false;
        const removed = await this.db.run(batch.sql, batch.params);
        await yieldToEventLoop();
        if (removed === 0) break;
      }
    }
    return true;
  }

  // ---- paging -------------------------------------------------------------

  private async page<T>(table: string, idColumn: string, where: string, params: SqlValue[], q: PageQuery, map: (r: Row) => T): Promise<Page<T>> {
    const clauses = [where];
    const args = [...params];
    for (const [cursor, forward] of [
      [q.after, true],
      [q.before, false],
    ] as const) {
      if (!cursor) continue;
      const [c] = await this.db.all<{ seq: unknown }>(`SELECT seq FROM ${table} WHERE ${where} AND ${idColumn} = ?`, [...params, cursor]);
      if (!c) continue;
      const greater = (q.order === 'asc') === forward;
      clauses.push(`(seq ${greater ? '>' : '<'} ? OR (seq = ? AND ${idColumn} ${greater ? '>' : '<'} ?))`);
      args.push(num(c.seq), num(c.seq), cursor);
    }
    const dir = q.order === 'asc' ? 'ASC' : 'DESC';
    const rows = await this.db.all(`SELECT * FROM ${table} WHERE ${clauses.join(' AND ')} ORDER BY seq ${dir}, ${idColumn} ${dir} LIMIT ?`, [...args, q.limit + 1]);
    return { rows: rows.slice(0, q.limit).map(map), hasMore: rows.length > q.limit };
  }

  // ---- files --------------------------------------------------------------
  //
  // Every read and write of a file or a vector store names its owner: a row
  // of another owner is not there (the API answers 404 for it, as OpenAI does).

  async insertFile(f: FileRow, content: Buffer): Promise<void> {
    await this.db.run('INSERT INTO fs_files (id, owner, filename, purpose, bytes, created_at, seq, expires_at, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      f.id,
      f.owner,
      f.filename,
      f.purpose,
      f.bytes,
      f.createdAt,
      f.seq,
      f.expiresAt,
      content,
    ]);
  }

  /** How many files the owner has and their bytes, for the per-owner quotas (counted in the store: every worker sees the same). */
  async ownerUsage(owner: Owner): Promise<{ files: number; bytes: number }> {
    const [r] = await this.db.all<{ n: unknown; used: unknown }>('SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS used FROM fs_files WHERE owner = ?', [owner]);
    return { files: Number(r?.n ?? 0), bytes: Number(r?.used ?? 0) };
  }

  async getFile(id: string, owner: Owner): Promise<FileRow | undefined> {
    const [r] = await this.db.all(`SELECT ${FILE_COLUMNS} FROM fs_files WHERE id = ? AND owner = ?`, [id, owner]);
    return r ? fileRow(r) : undefined;
  }

  async getFiles(ids: readonly string[], owner: Owner): Promise<FileRow[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.all(`SELECT ${FILE_COLUMNS} FROM fs_files WHERE owner = ? AND id IN (${marks(ids.length)})`, [owner, ...ids]);
    return rows.map(fileRow);
  }

  async fileContent(id: string, owner: Owner): Promise<Buffer | undefined> {
    const [r] = await this.db.all<{ content: Buffer }>('SELECT content FROM fs_files WHERE id = ? AND owner = ?', [id, owner]);
    return r ? Buffer.from(r.content) : undefined;
  }

  /** A file for its ingestion job, whoever owns it: the job was created by the owner's request. */
  async fileForIngestion(id: string): Promise<{ file: FileRow; content: Buffer } | undefined> {
    const [r] = await this.db.all(`SELECT ${FILE_COLUMNS}, content FROM fs_files WHERE id = ?`, [id]);
    return r ? { file: fileRow(r), content: Buffer.from(r.content as Buffer) } : undefined;
  }

  listFiles(q: PageQuery, owner: Owner, purpose?: string): Promise<Page<FileRow>> {
    const where = purpose ? 'owner = ? AND purpose = ?' : 'owner = ?';
    return this.page('fs_files', 'id', where, purpose ? [owner, purpose] : [owner], q, fileRow);
  }

  /** Deletes the owner's file and unlinks it from every vector store (chunks included). */
  async deleteFile(id: string, owner: Owner): Promise<boolean> {
    return this.db
      .tx(async (t) => {
        const [mine] = await t.all('SELECT id FROM fs_files WHERE id = ? AND owner = ?', [id, owner]);
        if (!mine) return false;
        await recordPurge(t, '', id);
        await t.run('DELETE FROM fs_store_files WHERE file_id = ?', [id]);
        return (await t.run('DELETE FROM fs_files WHERE id = ?', [id])) > 0;
      })
      .then((deleted) => this.purgeIfDeleted(deleted));
  }

  /** After a deleting transaction: what it recorded goes in the background (see `purgePending`). */
  private purgeIfDeleted(deleted: boolean): boolean {
    if (deleted) this.purgeSoon();
    return deleted;
  }

  // ---- vector stores ------------------------------------------------------

  async insertStore(s: VectorStoreRow): Promise<void> {
    await this.db.run('INSERT INTO fs_vector_stores (id, owner, name, description, metadata, created_at, seq, last_active_at, expires_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      s.id,
      s.owner,
      s.name,
      s.description,
      JSON.stringify(s.metadata),
      s.createdAt,
      s.seq,
      s.lastActiveAt,
      s.expiresAfter ? JSON.stringify(s.expiresAfter) : null,
    ]);
  }

  async getStore(id: string, owner: Owner): Promise<VectorStoreRow | undefined> {
    const [r] = await this.db.all('SELECT * FROM fs_vector_stores WHERE id = ? AND owner = ?', [id, owner]);
    return r ? storeRow(r) : undefined;
  }

  /** Which of `ids` name stores of the owner; the others are unknown to them. */
  async ownedStoreIds(ids: readonly string[], owner: Owner): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.all<{ id: string }>(`SELECT id FROM fs_vector_stores WHERE owner = ? AND id IN (${marks(ids.length)})`, [owner, ...ids]);
    return new Set(rows.map((r) => String(r.id)));
  }

  listStores(q: PageQuery, owner: Owner): Promise<Page<VectorStoreRow>> {
    return this.page('fs_vector_stores', 'id', 'owner = ?', [owner], q, storeRow);
  }

  /** Every owner's vector stores, newest first: the operator's console lists them (behind an administrator key). */
  listAllStores(q: PageQuery): Promise<Page<VectorStoreRow>> {
    return this.page('fs_vector_stores', 'id', '1 = 1', [], q, storeRow);
  }

  /** A vector store whoever owns it, for the console (tenant routes go through `getStore`). */
  async storeById(id: string): Promise<VectorStoreRow | undefined> {
    const [r] = await this.db.all('SELECT * FROM fs_vector_stores WHERE id = ?', [id]);
    return r ? storeRow(r) : undefined;
  }

  async updateStore(s: VectorStoreRow): Promise<void> {
    await this.db.run('UPDATE fs_vector_stores SET name = ?, metadata = ?, expires_after = ?, last_active_at = ? WHERE id = ? AND owner = ?', [
      s.name,
      JSON.stringify(s.metadata),
      s.expiresAfter ? JSON.stringify(s.expiresAfter) : null,
      s.lastActiveAt,
      s.id,
      s.owner,
    ]);
  }

  async touchStores(ids: readonly string[], now: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db.run(`UPDATE fs_vector_stores SET last_active_at = ? WHERE id IN (${marks(ids.length)})`, [now, ...ids]);
  }

  async deleteStore(id: string, owner: Owner): Promise<boolean> {
    return this.db
      .tx(async (t) => {
        const [mine] = await t.all('SELECT id FROM fs_vector_stores WHERE id = ? AND owner = ?', [id, owner]);
        if (!mine) return false;
        await recordPurge(t, id, '');
        await t.run('DELETE FROM fs_store_files WHERE store_id = ?', [id]);
        await t.run('DELETE FROM fs_batches WHERE store_id = ?', [id]);
        return (await t.run('DELETE FROM fs_vector_stores WHERE id = ?', [id])) > 0;
      })
      .then((deleted) => this.purgeIfDeleted(deleted));
  }

  /** File counts and usage for several stores in one pass. */
  async storeStats(ids: readonly string[]): Promise<Map<string, { counts: FileCounts; usageBytes: number }>> {
    const out = new Map<string, { counts: FileCounts; usageBytes: number }>();
    for (const id of ids) out.set(id, { counts: { in_progress: 0, completed: 0, failed: 0, cancelled: 0, total: 0 }, usageBytes: 0 });
    if (ids.length === 0) return out;
    const rows = await this.db.all<{ store_id: string; status: StoreFileStatus; n: unknown; used: unknown }>(
      `SELECT store_id, status, COUNT(*) AS n, COALESCE(SUM(usage_bytes), 0) AS used FROM fs_store_files
       WHERE store_id IN (${marks(ids.length)}) GROUP BY store_id, status`,
      [...ids],
    );
    for (const r of rows) {
      const s = out.get(r.store_id)!;
      s.counts[r.status] = num(r.n);
      s.counts.total += num(r.n);
      s.usageBytes += num(r.used);
    }
    return out;
  }

  // ---- files in stores ----------------------------------------------------

  /** Adds files to a store as ingestion jobs. A file already in the store keeps its row (OpenAI's behaviour). */
  async addStoreFiles(rows: StoreFileRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.tx(async (t) => {
      for (const r of rows) {
        await t.run(
          `INSERT INTO fs_store_files (store_id, file_id, batch_id, status, last_error, attributes, chunking, usage_bytes, created_at, seq)
           VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?) ON CONFLICT (store_id, file_id) DO NOTHING`,
          [
            r.storeId,
            r.fileId,
            r.batchId,
            r.status,
            r.lastError ? JSON.stringify(r.lastError) : null,
            JSON.stringify(r.attributes),
            JSON.stringify(r.chunking),
            r.createdAt,
            r.seq,
          ],
        );
      }
    });
  }

  async getStoreFile(storeId: string, fileId: string): Promise<StoreFileRow | undefined> {
    const [r] = await this.db.all('SELECT * FROM fs_store_files WHERE store_id = ? AND file_id = ?', [storeId, fileId]);
    return r ? storeFileRow(r) : undefined;
  }

  listStoreFiles(storeId: string, q: PageQuery, filter: { status?: StoreFileStatus; batchId?: string }): Promise<Page<StoreFileRow>> {
    const clauses = ['store_id = ?'];
    const params: SqlValue[] = [storeId];
    if (filter.status) {
      clauses.push('status = ?');
      params.push(filter.status);
    }
    if (filter.batchId) {
      clauses.push('batch_id = ?');
      params.push(filter.batchId);
    }
    return this.page('fs_store_files', 'file_id', clauses.join(' AND '), params, q, storeFileRow);
  }

  /** The files of some stores with their attributes, for filters evaluated before ranking. */
  async searchableFiles(storeIds: readonly string[]): Promise<Array<{ storeId: string; fileId: string; attributes: Attributes }>> {
    if (storeIds.length === 0) return [];
    const rows = await this.db.all<{ store_id: string; file_id: string; attributes: string }>(
      `SELECT store_id, file_id, attributes FROM fs_store_files WHERE status = 'completed' AND store_id IN (${marks(storeIds.length)})`,
      [...storeIds],
    );
    return rows.map((r) => ({ storeId: r.store_id, fileId: r.file_id, attributes: json(r.attributes, {}) }));
  }

  async updateAttributes(storeId: string, fileId: string, attributes: Attributes): Promise<void> {
    await this.db.run('UPDATE fs_store_files SET attributes = ? WHERE store_id = ? AND file_id = ?', [JSON.stringify(attributes), storeId, fileId]);
  }

  async deleteStoreFile(storeId: string, fileId: string): Promise<boolean> {
    return this.db
      .tx(async (t) => {
        const removed = (await t.run('DELETE FROM fs_store_files WHERE store_id = ? AND file_id = ?', [storeId, fileId])) > 0;
        if (removed) await recordPurge(t, storeId, fileId);
        return removed;
      })
      .then((deleted) => this.purgeIfDeleted(deleted));
  }

  async chunkTexts(storeId: string, fileId: string): Promise<string[]> {
    const rows = await this.db.all<{ text: string }>('SELECT text FROM fs_chunks WHERE store_id = ? AND file_id = ? ORDER BY position', [storeId, fileId]);
    return rows.map((r) => r.text);
  }

  // ---- batches ------------------------------------------------------------

  async insertBatch(b: BatchRow, files: StoreFileRow[]): Promise<void> {
    await this.db.tx(async (t) => {
      await t.run('INSERT INTO fs_batches (id, store_id, created_at, cancelled) VALUES (?, ?, ?, 0)', [b.id, b.storeId, b.createdAt]);
      for (const r of files) {
        // A file already in the store joins the batch and is ingested again with the batch's settings.
        await t.run(
          `INSERT INTO fs_store_files (store_id, file_id, batch_id, status, last_error, attributes, chunking, usage_bytes, created_at, seq)
           VALUES (?, ?, ?, 'in_progress', NULL, ?, ?, 0, ?, ?)
           ON CONFLICT (store_id, file_id) DO UPDATE SET batch_id = excluded.batch_id, status = 'in_progress', last_error = NULL,
             attributes = excluded.attributes, chunking = excluded.chunking, claimed_by = NULL, lease_until = NULL`,
          [r.storeId, r.fileId, r.batchId, JSON.stringify(r.attributes), JSON.stringify(r.chunking), r.createdAt, r.seq],
        );
      }
    });
  }

  async getBatch(id: string): Promise<BatchRow | undefined> {
    const [r] = await this.db.all('SELECT * FROM fs_batches WHERE id = ?', [id]);
    return r ? { id: String(r.id), storeId: String(r.store_id), createdAt: num(r.created_at), cancelled: num(r.cancelled) === 1 } : undefined;
  }

  async batchCounts(id: string): Promise<FileCounts> {
    const counts: FileCounts = { in_progress: 0, completed: 0, failed: 0, cancelled: 0, total: 0 };
    const rows = await this.db.all<{ status: StoreFileStatus; n: unknown }>('SELECT status, COUNT(*) AS n FROM fs_store_files WHERE batch_id = ? GROUP BY status', [id]);
    for (const r of rows) {
      counts[r.status] = num(r.n);
      counts.total += num(r.n);
    }
    return counts;
  }

  /** Files of the batch not yet ingested become `cancelled`; a worker holding one drops its result. */
  async cancelBatch(id: string): Promise<void> {
    await this.db.tx(async (t) => {
      await t.run('UPDATE fs_batches SET cancelled = 1 WHERE id = ?', [id]);
      await t.run(`UPDATE fs_store_files SET status = 'cancelled', claimed_by = NULL, lease_until = NULL WHERE batch_id = ? AND status = 'in_progress'`, [id]);
    });
  }

  // ---- ingestion jobs -----------------------------------------------------

  /**
   * Claims one waiting job atomically: on PostgreSQL with `FOR UPDATE SKIP
   * LOCKED`, so replicas polling at once each get a different row; on SQLite
   * a single UPDATE ... RETURNING under the database's write lock. Every
   * claim counts an attempt; a job already claimed `maxAttempts` times (its
   * process died or hung each time, since a job that ends in any other way
   * is completed, failed or handed back uncounted) is failed here instead of
   * being run again, so a file that kills its process cannot keep a gateway,
   * or every replica of it, from serving.
   */
  async claimJob(worker: string, nowMs: number, leaseMs: number, maxAttempts = Number.MAX_SAFE_INTEGER, skipOwners: readonly string[] = []): Promise<ClaimedJob | undefined> {
    // `skipOwners`: owners already holding their share of this worker's threads; their next file waits, another owner's goes first.
    const pick = nextWaitingFileQuery(this.db.kind, skipOwners.length);
    let owner = '';
    const claimed = await this.db.tx(async (t) => {
      for (;;) {
        const [row] = await t.all<{ store_id: string; file_id: string; attempts: number | string; owner: string }>(pick, [nowMs, ...skipOwners]);
        if (!row) return undefined;
        if (num(row.attempts) >= maxAttempts) {
          const error = {
            code: 'server_error',
            message: `Ingestion of this file was started ${num(row.attempts)} times and never finished (the process ingesting it stopped each time); it is not retried.`,
          };
          await t.run(`UPDATE fs_store_files SET status = 'failed', last_error = ?, claimed_by = NULL, lease_until = NULL WHERE store_id = ? AND file_id = ?`, [
            JSON.stringify(error),
            row.store_id,
            row.file_id,
          ]);
          continue;
        }
        owner = String(row.owner ?? '');
        const [r] = await t.all(`UPDATE fs_store_files SET claimed_by = ?, lease_until = ?, attempts = attempts + 1 WHERE store_id = ? AND file_id = ? RETURNING *`, [
          worker,
          nowMs + leaseMs,
          row.store_id,
          row.file_id,
        ]);
        return r ? storeFileRow(r) : undefined;
      }
    });
    return claimed && { storeId: claimed.storeId, fileId: claimed.fileId, chunking: claimed.chunking, attempts: claimed.attempts, owner };
  }

  /**
   * Writes a job's chunks and marks it completed, only if this worker still
   * holds it and nobody cancelled or removed it meanwhile: one transaction,
   * so a search sees all of the file's chunks or none.
   */
  async completeJob(job: ClaimedJob, worker: string, chunks: NewChunk[], usageBytes: number): Promise<boolean> {
    const writes = await chunkWrites();
    const rows = chunks.map((c) => ({ position: c.position, text: c.text, embedding: c.embedding ? toBlob(c.embedding) : null, terms: c.terms }));
    // A large file is many rows: let requests run between slices of them.
    return this.db.tx((t) => writes.completeWithChunks(t, { storeId: job.storeId, fileId: job.fileId, worker, usageBytes }, rows, yieldToEventLoop));
  }

  /**
   * Where an ingestion thread may complete jobs itself, through a SQLite
   * connection of its own to this file (see `chunk-writes.mjs`); undefined
   * when only this connection can (PostgreSQL, SQLite `:memory:`).
   */
  get threadWritableFile(): string | undefined {
    return this.db.kind === 'sqlite' ? this.db.sqliteFile : undefined;
  }

  async failJob(job: ClaimedJob, worker: string, error: { code: string; message: string }): Promise<void> {
    await this.db.run(
      `UPDATE fs_store_files SET status = 'failed', last_error = ?, claimed_by = NULL, lease_until = NULL
       WHERE store_id = ? AND file_id = ? AND claimed_by = ? AND status = 'in_progress'`,
      [JSON.stringify(error), job.storeId, job.fileId, worker],
    );
  }

  /**
   * Gives a job back (shutdown): another replica, or this one after a
   * restart, takes it at once. A job handed back was not the cause of
   * anything, so its claim does not count as an attempt.
   */
  async releaseJob(job: ClaimedJob, worker: string): Promise<void> {
    await this.db.run(
      `UPDATE fs_store_files SET claimed_by = NULL, lease_until = NULL, attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END WHERE store_id = ? AND file_id = ? AND claimed_by = ?`,
      [job.storeId, job.fileId, worker],
    );
  }

  async renewLease(job: ClaimedJob, worker: string, until: number): Promise<void> {
    await this.db.run('UPDATE fs_store_files SET lease_until = ? WHERE store_id = ? AND file_id = ? AND claimed_by = ?', [until, job.storeId, job.fileId, worker]);
  }

  // ---- retrieval ----------------------------------------------------------

  /**
   * The chunks a search may rank: those of completed files in the stores,
   * or, after attribute filtering, of exactly the listed files. Without a
   * filter the database joins on the stores alone, so a search does not ship
   * every file key to it.
   */
  private scopeJoin(scope: SearchScope): { join: string; params: SqlValue[] } {
    if (scope.fileKeys) {
      const keys = JSON.stringify(scope.fileKeys.map((k) => [k.storeId, k.fileId]));
      return {
        join:
          this.db.kind === 'sqlite'
            ? `JOIN (SELECT json_extract(value, '$[0]') AS s, json_extract(value, '$[1]') AS f FROM json_each(?)) k ON k.s = c.store_id AND k.f = c.file_id`
            : `JOIN (SELECT k->>0 AS s, k->>1 AS f FROM jsonb_array_elements(?::jsonb) k) k ON k.s = c.store_id AND k.f = c.file_id`,
        params: [keys],
      };
    }
    return {
      join: `JOIN fs_store_files sf ON sf.store_id = c.store_id AND sf.file_id = c.file_id AND sf.status = 'completed' AND c.store_id IN (${marks(scope.storeIds.length)})`,
      params: [...scope.storeIds],
    };
  }

  /**
   * The share of a chunk that overlaps the next one, from a store file's
   * chunking (`sf` is its `fs_store_files` row; 0 when it is gone).
   */
  private overlapShare(sf: string): string {
    const field = (name: string) =>
      this.db.kind === 'sqlite' ? `CAST(json_extract(${sf}.chunking, '$.${name}') AS REAL)` : `CAST(CAST(${sf}.chunking AS jsonb)->>'${name}' AS DOUBLE PRECISION)`;
    return `COALESCE(${field('chunkOverlapTokens')} / NULLIF(${field('maxChunkSizeTokens')}, 0), 0)`;
  }

  /**
   * Lexical ranking: BM25 over the store-local index, the same SQL on both
   * databases. Statistics (chunk and file counts, mean lengths, document
   * frequencies) are those of the searched stores, read through the (store,
   * term) prefix of `fs_postings` like the matching itself: a search costs
   * what its stores hold, not what the database holds.
   *
   * A chunk is ranked by its own BM25 plus its file's: the file scored as
   * one document (its chunks' term counts summed, its length their lengths
   * summed, idf over files). A long document's query words fall in
   * different chunks; the file's score lets the chunk of a file that holds
   * all of them outrank a chunk that happens to hold most of them in a file
   * about something else, while the results stay chunks. Both parts are
   * divided by the BM25 an average-length chunk (file) would get holding
   * every query term once, so they weigh alike whatever the query:
   * `rank` = chunk/ideal + FILE_WEIGHT × file/ideal, uncapped, orders the
   * results; `score` = rank / (1 + FILE_WEIGHT), capped at 1, is the
   * relevance reported and thresholded (README: the scale). `terms` are
   * analyzer output (`queryTerms`). `onlyIds` scores those chunks alone
   * (hybrid fusion fills in missing scores with it).
   */
  async lexical(scope: SearchScope, terms: readonly string[], limit: number, onlyIds?: readonly number[]): Promise<RankedChunk[]> {
    if (isEmpty(scope) || terms.length === 0 || onlyIds?.length === 0) return [];
    const stores = marks(scope.storeIds.length);
    const overlap = this.overlapShare('sf');
    // A file's length counts each of its words once: overlapping chunks
    // count the overlap twice, and summed as they are they would make every
    // word of a long file count double against its length (BM25 would then
    // favour long files, whose words are mostly rare within them).
    const [stats] = await this.db.all<{ n: unknown; files: unknown; total: unknown; file_total: unknown }>(
      `SELECT SUM(f.chunks) AS n, COUNT(*) AS files, COALESCE(SUM(f.len), 0) AS total, COALESCE(SUM(f.len * ${DEDUP('f.chunks', overlap)}), 0) AS file_total
       FROM (SELECT store_id, file_id, COUNT(*) AS chunks, SUM(terms) AS len FROM fs_chunks WHERE store_id IN (${stores}) GROUP BY store_id, file_id) f
       LEFT JOIN fs_store_files sf ON sf.store_id = f.store_id AND sf.file_id = f.file_id`,
      [...scope.storeIds],
    );
    const n = num(stats?.n ?? 0);
    if (n === 0) return [];
    const files = Math.max(1, num(stats.files));
    const avgLength = Math.max(1, num(stats.total) / n);
    const avgFileLength = Math.max(1, num(stats.file_total) / files);
    const dfRows = await this.db.all<{ term: string; df: unknown; fdf: unknown }>(
      `SELECT term, COUNT(*) AS df, COUNT(DISTINCT store_id || '/' || file_id) AS fdf FROM fs_postings WHERE store_id IN (${stores}) AND term IN (${marks(terms.length)}) GROUP BY term`,
      [...scope.storeIds, ...terms],
    );
    const df = new Map(dfRows.map((r) => [String(r.term), { chunks: num(r.df), files: num(r.fdf) }]));
    const ideal = terms.reduce((sum, t) => sum + idf(n, df.get(t)?.chunks ?? 0), 0);
    const fileIdeal = terms.reduce((sum, t) => sum + idf(files, df.get(t)?.files ?? 0), 0);
    const present = terms.filter((t) => df.has(t));
    if (present.length === 0 || ideal <= 0 || fileIdeal <= 0) return [];
    const weights: SqlValue[] = present.flatMap((t) => [t, idf(n, df.get(t)!.chunks), idf(files, df.get(t)!.files)]);
    const bm25 = (tf: string, len: string, avg: string) => `${tf} * ${BM25_K1 + 1} / (${tf} + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * ${len} / ${avg}))`;
    // Scored from the index entries alone, materialised first so that no
    // planner (PostgreSQL before its statistics exist, say) can start from
    // the store's files instead of the query's terms: the (store, term)
    // prefix drives the lookup. The files' lengths are read from their
    // chunks. Every step is materialised once: PostgreSQL, left to inline
    // them, planned nested loops that re-read a store of long files per
    // candidate (tens of seconds per search). Then each candidate's file is
    // checked by its key: completed, or one of the filtered files. The
    // candidates come in the order results are given (every file's best
    // chunk before any file's second: `spreadOverFiles`), so that the chunks
    // of a few long files, which share their file's score, cannot fill the
    // candidate list and keep every other file out of it.
    const { join, params } = scope.fileKeys ? this.scopeJoin(scope) : { join: '', params: [] };
    const where = [
      ...(scope.fileKeys ? [] : [`EXISTS (SELECT 1 FROM fs_store_files sf WHERE sf.store_id = c.store_id AND sf.file_id = c.file_id AND sf.status = 'completed')`]),
      ...(onlyIds ? [`c.id IN (${marks(onlyIds.length)})`] : []),
    ];
    const rows = await this.db.all<{ id: unknown; r: unknown }>(
      `WITH q (term, idf, fidf) AS (VALUES ${present.map(() => '(CAST(? AS TEXT), CAST(? AS DOUBLE PRECISION), CAST(? AS DOUBLE PRECISION))').join(', ')}),
       p AS MATERIALIZED (SELECT p.chunk_id, p.store_id, p.file_id, p.term, p.tf, p.len, q.idf, q.fidf
             FROM q JOIN fs_postings p ON p.store_id IN (${stores}) AND p.term = q.term),
       cs AS MATERIALIZED (SELECT chunk_id AS id, store_id, file_id, SUM(idf * ${bm25('tf', 'len', 'CAST(? AS DOUBLE PRECISION)')}) AS s FROM p GROUP BY chunk_id, store_id, file_id),
       ft AS MATERIALIZED (SELECT store_id, file_id, fidf, SUM(tf) AS tf FROM p GROUP BY store_id, file_id, term, fidf),
       fc AS MATERIALIZED (SELECT c.store_id, c.file_id, COUNT(*) AS chunks, SUM(c.terms) AS len
             FROM fs_chunks c WHERE c.store_id IN (${stores}) GROUP BY c.store_id, c.file_id),
       fl AS MATERIALIZED (SELECT fc.store_id, fc.file_id, fc.len * ${DEDUP('fc.chunks', overlap)} AS len, ${DEDUP('fc.chunks', overlap)} AS once
             FROM fc LEFT JOIN fs_store_files sf ON sf.store_id = fc.store_id AND sf.file_id = fc.file_id),
       fs AS MATERIALIZED (SELECT ft.store_id, ft.file_id, SUM(ft.fidf * ${bm25('(ft.tf * fl.once)', 'fl.len', 'CAST(? AS DOUBLE PRECISION)')}) AS s
             FROM ft JOIN fl ON fl.store_id = ft.store_id AND fl.file_id = ft.file_id GROUP BY ft.store_id, ft.file_id),
       m AS (SELECT cs.id, cs.store_id, cs.file_id, cs.s AS s, cs.s / CAST(? AS DOUBLE PRECISION) + CAST(? AS DOUBLE PRECISION) * fs.s / CAST(? AS DOUBLE PRECISION) AS r
             FROM cs JOIN fs ON fs.store_id = cs.store_id AND fs.file_id = cs.file_id),
       ranked AS (SELECT m.*, ROW_NUMBER() OVER (PARTITION BY m.store_id, m.file_id ORDER BY m.r DESC, m.s DESC, m.id) AS k FROM m)
       SELECT c.id AS id, c.r AS r FROM ranked c ${join} ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY c.k, c.r DESC, c.s DESC, c.file_id, c.id LIMIT ?`,
      [...weights, ...scope.storeIds, avgLength, ...scope.storeIds, avgFileLength, ideal, this.fileWeight, fileIdeal, ...params, ...(onlyIds ?? []), limit],
    );
    return rows.map((r) => {
      const rank = num(r.r);
      return { chunkId: num(r.id), rank, score: Math.min(1, rank / (1 + this.fileWeight)) };
    });
  }

  /**
   * Vector ranking by cosine similarity (clamped at 0: opposite is as
   * unrelated as it gets): in SQL with sqlite-vec, in Node otherwise
   * (PostgreSQL without pgvector), over the same scope.
   */
  async vector(scope: SearchScope, query: Float32Array, limit: number, onlyIds?: readonly number[]): Promise<RankedChunk[]> {
    if (isEmpty(scope) || onlyIds?.length === 0) return [];
    const { join, params } = this.scopeJoin(scope);
    const only = onlyIds ? ` AND c.id IN (${marks(onlyIds.length)})` : '';
    const ids = onlyIds ?? [];
    if (this.db.kind === 'sqlite' && this.db.hasVectorFunctions) {
      const rows = await this.db.all<{ id: number; d: number }>(
        `SELECT c.id AS id, vec_distance_cosine(c.embedding, ?) AS d FROM fs_chunks c ${join}
         WHERE c.embedding IS NOT NULL AND length(c.embedding) = ?${only} ORDER BY d, c.id LIMIT ?`,
        [toBlob(query), ...params, query.byteLength, ...ids, limit],
      );
      return rows.map((r) => {
        const score = Math.max(0, 1 - num(r.d));
        return { chunkId: num(r.id), score, rank: score };
      });
    }
    const rows = await this.db.all<{ id: unknown; embedding: Buffer }>(
      `SELECT c.id AS id, c.embedding AS embedding FROM fs_chunks c ${join} WHERE c.embedding IS NOT NULL${only}`,
      [...params, ...ids],
    );
    return rows
      .map((r) => {
        const score = Math.max(0, cosine(query, fromBlob(r.embedding)));
        return { chunkId: num(r.id), score, rank: score };
      })
      .sort((a, b) => b.score - a.score || a.chunkId - b.chunkId)
      .slice(0, limit);
  }

  /** Where chunks sit (their file and position), for ranking that looks past one chunk. */
  async chunkPlaces(ids: readonly number[]): Promise<Map<number, { file: string; position: number }>> {
    const out = new Map<number, { file: string; position: number }>();
    for (let i = 0; i < ids.length; i += 5000) {
      const slice = ids.slice(i, i + 5000);
      const rows = await this.db.all<{ id: unknown; store_id: string; file_id: string; position: unknown }>(
        `SELECT id, store_id, file_id, position FROM fs_chunks WHERE id IN (${marks(slice.length)})`,
        [...slice],
      );
      for (const r of rows) out.set(num(r.id), { file: `${r.store_id}/${r.file_id}`, position: num(r.position) });
    }
    return out;
  }

  async chunks(ids: readonly number[]): Promise<ChunkHit[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.all<Row>(
      `SELECT c.id, c.store_id, c.file_id, c.position, c.text, f.filename, sf.attributes
       FROM fs_chunks c JOIN fs_files f ON f.id = c.file_id
       JOIN fs_store_files sf ON sf.store_id = c.store_id AND sf.file_id = c.file_id
       WHERE c.id IN (${marks(ids.length)})`,
      [...ids],
    );
    return rows.map((r) => ({
      chunkId: num(r.id),
      storeId: String(r.store_id),
      fileId: String(r.file_id),
      filename: String(r.filename),
      position: num(r.position),
      text: String(r.text),
      attributes: json(r.attributes, {}),
    }));
  }
}

export type { ChunkingStrategy };

/**
 * The next waiting file in upload order, not leased, not of an owner in the
 * skipped list (`skipped` placeholders after the time): walked in
 * `fs_store_files_waiting` order, so a claim reads the few leased rows ahead
 * of it rather than sorting every waiting file.
 */
export function nextWaitingFileQuery(kind: SqlDatabase['kind'], skipped: number): string {
  const skip = skipped > 0 ? ` AND v.owner NOT IN (${Array.from({ length: skipped }, () => '?').join(', ')})` : '';
  return (
    `SELECT f.store_id, f.file_id, f.attempts, v.owner FROM fs_store_files f JOIN fs_vector_stores v ON v.id = f.store_id
       WHERE f.status = 'in_progress' AND (f.lease_until IS NULL OR f.lease_until < ?)${skip} ORDER BY f.seq LIMIT 1` + (kind === 'postgres' ? ' FOR UPDATE OF f SKIP LOCKED' : '')
  );
}
