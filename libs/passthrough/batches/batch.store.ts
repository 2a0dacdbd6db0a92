import type { Row, SqlDatabase, SqlValue } from '#storage/sql/sql-database.js';
import type { BatchDoc, BatchRequestRow, BatchResultRow, BatchRow, BatchStatus, ClaimedRequest } from './batch-rows.js';
import { LIVE_BATCH_STATUSES } from './batch-rows.js';
import { takeAdvisoryXactLock } from '#tool-sdk/ports/lock-wait.js';

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS sy_batches (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, seq BIGINT NOT NULL, status TEXT NOT NULL, endpoint TEXT NOT NULL,
    total INTEGER NOT NULL, completed INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
    expires_at BIGINT NOT NULL, doc TEXT NOT NULL, claimed_by TEXT, lease_until BIGINT)`,
  `CREATE INDEX IF NOT EXISTS sy_batches_owner ON sy_batches (owner, seq)`,
  `CREATE INDEX IF NOT EXISTS sy_batches_status ON sy_batches (status)`,
  // One row per input line; the row is also the job (pending, claimed through claimed_by/lease_until),
  // so the work left exists exactly as long as the batch runs, across restarts and replicas.
  `CREATE TABLE IF NOT EXISTS sy_batch_requests (
    batch_id TEXT NOT NULL, line INTEGER NOT NULL, batch_seq BIGINT NOT NULL, custom_id TEXT NOT NULL, body TEXT NOT NULL,
    status TEXT NOT NULL, ok INTEGER, result TEXT, claimed_by TEXT, lease_until BIGINT, attempts INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (batch_id, line))`,
  `CREATE INDEX IF NOT EXISTS sy_batch_requests_jobs ON sy_batch_requests (status, batch_seq, line)`,
  // One batch's pending lines in order, without walking past the lines it has done (claims per owner go batch by batch).
  `CREATE INDEX IF NOT EXISTS sy_batch_requests_batch_pending ON sy_batch_requests (batch_id, status, line)`,
];

/** Rows inserted per statement: well under SQLite's 32766 parameters. */
const INSERT_CHUNK = 200;

const num = (v: unknown): number => (typeof v === 'bigint' ? Number(v) : Number(v ?? 0));

function batchOf(r: Row): BatchRow {
  return {
    id: String(r.id),
    owner: String(r.owner),
    seq: num(r.seq),
    status: r.status as BatchStatus,
    endpoint: String(r.endpoint),
    total: num(r.total),
    completed: num(r.completed),
    failed: num(r.failed),
    expiresAt: num(r.expires_at),
    doc: JSON.parse(String(r.doc)) as BatchDoc,
  };
}

/**
 * Batches and their requests, on SQLite or PostgreSQL. Every process that
 * shares the database claims requests from it (a lease per claim, renewed
 * while the request runs), so the work is spread across workers and
 * replicas, and what a stopped process had claimed is taken up again once
 * its lease lapses.
 */
export class BatchStore {
  /** Set once the tables exist; false when the database driver is not installed (the gateway boots without batches). */
  ready = false;

  constructor(readonly db: SqlDatabase) {}

  /**
   * A batch row read to be changed in the same transaction is locked on
   * PostgreSQL, so two replicas cannot both take its finalizing (or race a
   * cancel); SQLite's single writer serialises the transaction already.
   */
  private get forUpdate(): string {
    return this.db.kind === 'postgres' ? ' FOR UPDATE' : '';
  }

  async init(): Promise<void> {
    // Replicas starting together on one PostgreSQL would race to create the same tables: one at a time.
    await this.db.tx(async (t) => {
      if (this.db.kind === 'postgres') await takeAdvisoryXactLock((sql) => t.all(sql), '7302171', 'the batches schema');
      for (const statement of SCHEMA) await t.run(statement);
    });
    this.ready = true;
  }

  close(): Promise<void> {
    return this.db.close();
  }

  async insert(batch: BatchRow, requests: readonly BatchRequestRow[]): Promise<void> {
    await this.db.tx(async (t) => {
      await t.run('INSERT INTO sy_batches (id, owner, seq, status, endpoint, total, completed, failed, expires_at, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
        batch.id,
        batch.owner,
        batch.seq,
        batch.status,
        batch.endpoint,
        batch.total,
        batch.completed,
        batch.failed,
        batch.expiresAt,
        JSON.stringify(batch.doc),
      ]);
      for (let i = 0; i < requests.length; i += INSERT_CHUNK) {
        const chunk = requests.slice(i, i + INSERT_CHUNK);
        const params: SqlValue[] = [];
        for (const r of chunk) params.push(batch.id, r.line, batch.seq, r.customId, r.body, 'pending');
        await t.run(`INSERT INTO sy_batch_requests (batch_id, line, batch_seq, custom_id, body, status) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`, params);
      }
    });
  }

  async get(id: string, owner: string): Promise<BatchRow | undefined> {
    const [r] = await this.db.all('SELECT * FROM sy_batches WHERE id = ? AND owner = ?', [id, owner]);
    return r ? batchOf(r) : undefined;
  }

  /** Newest first; `after` is the id the previous page ended with. */
  async list(owner: string, after: string | undefined, limit: number): Promise<{ rows: BatchRow[]; hasMore: boolean }> {
    const params: SqlValue[] = [owner];
    let where = 'owner = ?';
    if (after) {
      const [cursor] = await this.db.all<{ seq: unknown }>('SELECT seq FROM sy_batches WHERE owner = ? AND id = ?', [owner, after]);
      if (cursor) {
        where += ' AND (seq < ? OR (seq = ? AND id < ?))';
        params.push(num(cursor.seq), num(cursor.seq), after);
      }
    }
    const rows = await this.db.all(`SELECT * FROM sy_batches WHERE ${where} ORDER BY seq DESC, id DESC LIMIT ?`, [...params, limit + 1]);
    return { rows: rows.slice(0, limit).map(batchOf), hasMore: rows.length > limit };
  }

  async liveCount(owner: string): Promise<number> {
    const [r] = await this.db.all<{ n: unknown }>(`SELECT COUNT(*) AS n FROM sy_batches WHERE owner = ? AND status IN (${LIVE_BATCH_STATUSES.map(() => '?').join(', ')})`, [
      owner,
      ...LIVE_BATCH_STATUSES,
    ]);
    return num(r?.n);
  }

  /** Running batches, oldest first, with their owners: a handful of rows however long the batches are. */
  async runningBatches(): Promise<Array<{ id: string; owner: string }>> {
    const rows = await this.db.all(`SELECT id, owner FROM sy_batches WHERE status = 'in_progress' ORDER BY seq, id`);
    return rows.map((r) => ({ id: String(r.id), owner: String(r.owner) }));
  }

  /**
   * Claims up to `limit` pending requests of running batches, oldest batch
   * first, in line order; with `batchId`, of that batch only.
   * PostgreSQL skips rows another replica is claiming at the same moment;
   * the outer condition is re-checked on the row either way, so no request
   * is claimed twice while a lease holds. Only request rows are locked here,
   * never a batch row (see `complete` for the lock order).
   */
  async claim(node: string, now: number, leaseMs: number, limit: number, batchId?: string): Promise<ClaimedRequest[]> {
    if (limit <= 0) return [];
    const lock = this.db.kind === 'postgres' ? ' FOR UPDATE OF r SKIP LOCKED' : '';
    const ofBatch = batchId === undefined ? '' : ' AND r.batch_id = ?';
    // The pick is a materialized CTE: as `IN (SELECT ... LIMIT n)`, PostgreSQL may run the subquery more than once and claim more than n rows.
    const rows = await this.db.all(
      `WITH picked AS MATERIALIZED (
         SELECT r.batch_id, r.line FROM sy_batch_requests r JOIN sy_batches b ON b.id = r.batch_id
         WHERE r.status = 'pending' AND b.status = 'in_progress' AND (r.lease_until IS NULL OR r.lease_until < ?)${ofBatch}
         ORDER BY r.batch_seq, r.line LIMIT ?${lock})
       UPDATE sy_batch_requests SET claimed_by = ?, lease_until = ?, attempts = attempts + 1
       WHERE status = 'pending' AND (lease_until IS NULL OR lease_until < ?) AND (batch_id, line) IN (SELECT batch_id, line FROM picked)
       RETURNING batch_id, line, custom_id, body, attempts`,
      [now, ...(batchId === undefined ? [] : [batchId]), limit, node, now + leaseMs, now],
    );
    if (rows.length === 0) return [];
    const ids = [...new Set(rows.map((r) => String(r.batch_id)))];
    const batches = await this.db.all(`SELECT id, endpoint, owner FROM sy_batches WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
    const byId = new Map(batches.map((b) => [String(b.id), b]));
    return rows
      .map((r) => ({
        batchId: String(r.batch_id),
        line: num(r.line),
        customId: String(r.custom_id),
        body: String(r.body),
        attempts: num(r.attempts),
        endpoint: String(byId.get(String(r.batch_id))?.endpoint),
        owner: String(byId.get(String(r.batch_id))?.owner ?? ''),
      }))
      .sort((a, b) => (a.batchId === b.batchId ? a.line - b.line : 0));
  }

  /**
   * Records a claimed request's result and counts it; false when the claim
   * was lost (cancelled, expired, re-claimed).
   *
   * The lock order, everywhere a transaction writes both tables: the batch
   * row first, then its request rows (`cancel` and `claimFinalizing` do the
   * same). Updating the request row first and the counter second, as this
   * did, crossed a cancel's order and PostgreSQL broke the cycle by failing
   * one side with `deadlock detected`. Completions of one batch queue on its
   * row here, as they did on the counter update before.
   */
  async complete(node: string, request: ClaimedRequest, ok: boolean, result: string): Promise<boolean> {
    return this.db.tx(async (t) => {
      if (this.db.kind === 'postgres') await t.all('SELECT id FROM sy_batches WHERE id = ? FOR UPDATE', [request.batchId]);
      const changed = await t.run(
        `UPDATE sy_batch_requests SET status = 'done', ok = ?, result = ?, claimed_by = NULL, lease_until = NULL
         WHERE batch_id = ? AND line = ? AND claimed_by = ? AND status = 'pending'`,
        [ok ? 1 : 0, result, request.batchId, request.line, node],
      );
      if (changed !== 1) return false;
      await t.run(`UPDATE sy_batches SET ${ok ? 'completed = completed + 1' : 'failed = failed + 1'} WHERE id = ?`, [request.batchId]);
      return true;
    });
  }

  /** Extends this process's claims; returns the keys (`batch:line`) among them no longer pending, to stop. */
  async renew(node: string, keys: readonly ClaimedRequest[], until: number): Promise<ClaimedRequest[]> {
    const lost: ClaimedRequest[] = [];
    for (const request of keys) {
      const changed = await this.db.run(`UPDATE sy_batch_requests SET lease_until = ? WHERE batch_id = ? AND line = ? AND claimed_by = ? AND status = 'pending'`, [
        until,
        request.batchId,
        request.line,
        node,
      ]);
      if (changed !== 1) lost.push(request);
    }
    return lost;
  }

  /** Gives claims back at shutdown, without counting the attempt, so the next process starts them at once. */
  async release(node: string, requests: readonly ClaimedRequest[]): Promise<void> {
    for (const r of requests) {
      await this.db.run(
        `UPDATE sy_batch_requests SET claimed_by = NULL, lease_until = NULL, attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END
         WHERE batch_id = ? AND line = ? AND claimed_by = ? AND status = 'pending'`,
        [r.batchId, r.line, node],
      );
    }
  }

  /**
   * Moves a live batch to `cancelling` and drops its pending requests (those
   * running too: their results are refused when they arrive); the batch as
   * it now stands, undefined when missing. Batch row, then request rows: the
   * lock order `complete` follows.
   */
  async cancel(id: string, owner: string, now: number): Promise<BatchRow | undefined> {
    return this.db.tx(async (t) => {
      const [r] = await t.all(`SELECT * FROM sy_batches WHERE id = ? AND owner = ?${this.forUpdate}`, [id, owner]);
      if (!r) return undefined;
      const batch = batchOf(r);
      if (batch.status !== 'in_progress' && batch.status !== 'validating') return batch;
      batch.status = 'cancelling';
      batch.doc.cancelling_at = now;
      await t.run('UPDATE sy_batches SET status = ?, doc = ? WHERE id = ?', [batch.status, JSON.stringify(batch.doc), id]);
      await t.run(`UPDATE sy_batch_requests SET status = 'cancelled' WHERE batch_id = ? AND status = 'pending'`, [id]);
      return batch;
    });
  }

  /**
   * Batches ready to finalize: running or cancelling with no pending request
   * left, running past their window, or finalizing under a lapsed claim (the
   * process writing their files stopped).
   */
  async dueForFinalizing(now: number): Promise<string[]> {
    const rows = await this.db.all<{ id: unknown }>(
      `SELECT id FROM sy_batches b WHERE
         (status IN ('in_progress', 'cancelling') AND (expires_at < ? OR NOT EXISTS (SELECT 1 FROM sy_batch_requests r WHERE r.batch_id = b.id AND r.status = 'pending')))
         OR (status = 'finalizing' AND (lease_until IS NULL OR lease_until < ?))
       ORDER BY seq LIMIT 20`,
      [now, now],
    );
    return rows.map((r) => String(r.id));
  }

  /**
   * Takes the right to finalize: one process writes a batch's files. A batch
   * past its window has its pending requests expired here; a running one
   * moves to `finalizing`. Undefined when another process holds it.
   */
  async claimFinalizing(id: string, node: string, now: number, leaseMs: number): Promise<BatchRow | undefined> {
    return this.db.tx(async (t) => {
      const [r] = await t.all(`SELECT * FROM sy_batches WHERE id = ?${this.forUpdate}`, [id]);
      if (!r) return undefined;
      const batch = batchOf(r);
      const lapsed = r.lease_until === null || num(r.lease_until) < now;
      if (!lapsed || !['in_progress', 'cancelling', 'finalizing'].includes(batch.status)) return undefined;
      if (batch.status === 'in_progress' && batch.expiresAt < now) {
        await t.run(`UPDATE sy_batch_requests SET status = 'expired' WHERE batch_id = ? AND status = 'pending'`, [id]);
        batch.doc.expired_at = Math.floor(now / 1000);
      } else if (batch.status !== 'finalizing') {
        const [left] = await t.all<{ n: unknown }>(`SELECT COUNT(*) AS n FROM sy_batch_requests WHERE batch_id = ? AND status = 'pending'`, [id]);
        if (num(left?.n) > 0) return undefined;
      }
      if (batch.status === 'in_progress') {
        batch.status = 'finalizing';
        batch.doc.finalizing_at = Math.floor(now / 1000);
      }
      await t.run('UPDATE sy_batches SET status = ?, doc = ?, claimed_by = ?, lease_until = ? WHERE id = ?', [batch.status, JSON.stringify(batch.doc), node, now + leaseMs, id]);
      return batch;
    });
  }

  /**
   * Every request's line, in input order: each row is in exactly one final
   * state by now, so each line lands in exactly one file. `expired` and
   * `cancelled` ones carry no result (their error line is written for them).
   */
  async results(id: string): Promise<Array<BatchResultRow & { customId: string; status: string }>> {
    const rows = await this.db.all(
      `SELECT line, ok, result, custom_id, status FROM sy_batch_requests WHERE batch_id = ? AND status IN ('done', 'expired', 'cancelled') ORDER BY line`,
      [id],
    );
    return rows.map((r) => ({ line: num(r.line), ok: num(r.ok) === 1, result: String(r.result ?? ''), customId: String(r.custom_id), status: String(r.status) }));
  }

  /** Writes the final status; false when this process no longer holds the batch. */
  async finish(batch: BatchRow, node: string): Promise<boolean> {
    const changed = await this.db.run('UPDATE sy_batches SET status = ?, doc = ?, claimed_by = NULL, lease_until = NULL WHERE id = ? AND claimed_by = ?', [
      batch.status,
      JSON.stringify(batch.doc),
      batch.id,
      node,
    ]);
    if (changed === 1) await this.db.run(`DELETE FROM sy_batch_requests WHERE batch_id = ?`, [batch.id]);
    return changed === 1;
  }
}
