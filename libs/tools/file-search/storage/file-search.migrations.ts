import { takeAdvisoryXactLock, type SqlDatabase } from '#tool-sdk/index.js';

/**
 * The library's own tables, prefixed `fs_`, versioned in
 * `fs_schema_migrations` apart from the state store's, so the two evolve
 * independently on one database.
 */
const COMMON = [
  `CREATE TABLE IF NOT EXISTS fs_files (
    id TEXT PRIMARY KEY, filename TEXT NOT NULL, purpose TEXT NOT NULL, bytes BIGINT NOT NULL,
    created_at BIGINT NOT NULL, seq BIGINT NOT NULL, expires_at BIGINT, content %BLOB% NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS fs_files_seq ON fs_files (seq, id)`,
  `CREATE TABLE IF NOT EXISTS fs_vector_stores (
    id TEXT PRIMARY KEY, name TEXT, description TEXT, metadata TEXT NOT NULL, created_at BIGINT NOT NULL,
    seq BIGINT NOT NULL, last_active_at BIGINT NOT NULL, expires_after TEXT)`,
  `CREATE INDEX IF NOT EXISTS fs_vector_stores_seq ON fs_vector_stores (seq, id)`,
  `CREATE TABLE IF NOT EXISTS fs_batches (
    id TEXT PRIMARY KEY, store_id TEXT NOT NULL, created_at BIGINT NOT NULL, cancelled INTEGER NOT NULL DEFAULT 0)`,
  // One row per file in a store; the row is also the ingestion job (status
  // in_progress, claimed through claimed_by/lease_until), so a job exists
  // exactly as long as its file is waiting, across restarts.
  `CREATE TABLE IF NOT EXISTS fs_store_files (
    store_id TEXT NOT NULL, file_id TEXT NOT NULL, batch_id TEXT, status TEXT NOT NULL, last_error TEXT,
    attributes TEXT NOT NULL, chunking TEXT NOT NULL, usage_bytes BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL, seq BIGINT NOT NULL, claimed_by TEXT, lease_until BIGINT,
    attempts INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (store_id, file_id))`,
  `CREATE INDEX IF NOT EXISTS fs_store_files_seq ON fs_store_files (store_id, seq, file_id)`,
  `CREATE INDEX IF NOT EXISTS fs_store_files_jobs ON fs_store_files (status, lease_until)`,
  `CREATE INDEX IF NOT EXISTS fs_store_files_file ON fs_store_files (file_id)`,
  `CREATE INDEX IF NOT EXISTS fs_store_files_batch ON fs_store_files (batch_id)`,
];

const SQLITE = [
  ...COMMON.map((s) => s.replace('%BLOB%', 'BLOB')),
  `CREATE TABLE IF NOT EXISTS fs_chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, store_id TEXT NOT NULL, file_id TEXT NOT NULL, position INTEGER NOT NULL,
    text TEXT NOT NULL, embedding BLOB)`,
  `CREATE INDEX IF NOT EXISTS fs_chunks_file ON fs_chunks (store_id, file_id, position)`,
  // External-content FTS5: the text lives once, in fs_chunks; triggers keep the index in step.
  `CREATE VIRTUAL TABLE IF NOT EXISTS fs_chunks_fts USING fts5(text, content='fs_chunks', content_rowid='id', tokenize='porter unicode61')`,
  `CREATE TRIGGER IF NOT EXISTS fs_chunks_ai AFTER INSERT ON fs_chunks BEGIN
    INSERT INTO fs_chunks_fts (rowid, text) VALUES (new.id, new.text); END`,
  `CREATE TRIGGER IF NOT EXISTS fs_chunks_ad AFTER DELETE ON fs_chunks BEGIN
    INSERT INTO fs_chunks_fts (fs_chunks_fts, rowid, text) VALUES ('delete', old.id, old.text); END`,
];

const POSTGRES = [
  ...COMMON.map((s) => s.replace('%BLOB%', 'BYTEA')),
  `CREATE TABLE IF NOT EXISTS fs_chunks (
    id BIGSERIAL PRIMARY KEY, store_id TEXT NOT NULL, file_id TEXT NOT NULL, position INTEGER NOT NULL,
    text TEXT NOT NULL, embedding BYTEA,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED)`,
  `CREATE INDEX IF NOT EXISTS fs_chunks_file ON fs_chunks (store_id, file_id, position)`,
  `CREATE INDEX IF NOT EXISTS fs_chunks_tsv ON fs_chunks USING GIN (tsv)`,
];

/**
 * Version 2: files and vector stores belong to an owner (the request's API
 * key hash, or its OIDC subject). Rows from before get `''`, the owner of
 * requests made without authentication, so a gateway without keys keeps
 * seeing them; with keys configured they can be handed to one key with
 * `UPDATE fs_files SET owner = '<hash>' WHERE owner = ''` (and likewise
 * `fs_vector_stores`). Store files, batches and chunks are reached through
 * their store, so the store's owner covers them.
 */
const OWNERS = [
  `ALTER TABLE fs_files ADD COLUMN owner TEXT NOT NULL DEFAULT ''`,
  `ALTER TABLE fs_vector_stores ADD COLUMN owner TEXT NOT NULL DEFAULT ''`,
  `CREATE INDEX IF NOT EXISTS fs_files_owner_seq ON fs_files (owner, seq, id)`,
  `CREATE INDEX IF NOT EXISTS fs_vector_stores_owner_seq ON fs_vector_stores (owner, seq, id)`,
];

/**
 * Version 3: the lexical index is file search's own, partitioned by store.
 * `fs_postings` holds each chunk's distinct terms (the shared analyzer's
 * Porter stems) with their counts, keyed by (store, term, chunk), so a
 * search reads only the searched stores' entries for its terms however many
 * other stores the database holds. Each entry also carries its chunk's file
 * and length (BM25's normalisation), so scoring reads these entries alone;
 * `fs_chunks.terms` is the same length, NULL until a chunk is indexed. The global FTS5 table (SQLite) and tsvector (PostgreSQL) go:
 * they matched over every store and narrowed afterwards. Chunks from before
 * have `terms` NULL and are indexed by `FileSearchStore.init`.
 */
const STORE_INDEX: Record<SqlDatabase['kind'], readonly string[]> = {
  sqlite: [
    `ALTER TABLE fs_chunks ADD COLUMN terms INTEGER`,
    `CREATE TABLE IF NOT EXISTS fs_postings (store_id TEXT NOT NULL, term TEXT NOT NULL, chunk_id INTEGER NOT NULL, file_id TEXT NOT NULL,
      tf INTEGER NOT NULL, len INTEGER NOT NULL, PRIMARY KEY (store_id, term, chunk_id)) WITHOUT ROWID`,
    `CREATE INDEX IF NOT EXISTS fs_postings_file ON fs_postings (file_id, store_id)`,
    `DROP TRIGGER IF EXISTS fs_chunks_ai`,
    `DROP TRIGGER IF EXISTS fs_chunks_ad`,
    `DROP TABLE IF EXISTS fs_chunks_fts`,
  ],
  postgres: [
    `ALTER TABLE fs_chunks ADD COLUMN IF NOT EXISTS terms INTEGER`,
    `CREATE TABLE IF NOT EXISTS fs_postings (store_id TEXT NOT NULL, term TEXT NOT NULL, chunk_id BIGINT NOT NULL, file_id TEXT NOT NULL,
      tf INTEGER NOT NULL, len INTEGER NOT NULL, PRIMARY KEY (store_id, term, chunk_id))`,
    `CREATE INDEX IF NOT EXISTS fs_postings_file ON fs_postings (file_id, store_id)`,
    `DROP INDEX IF EXISTS fs_chunks_tsv`,
    `ALTER TABLE fs_chunks DROP COLUMN IF EXISTS tsv`,
  ],
};

/**
 * Version 4: deletions of indexed content in the background. Deleting a file
 * or a store removes its rows in `fs_store_files`/`fs_files`/`fs_vector_stores`
 * at once (nothing searches it from then on) and records in `fs_purges` what
 * its chunks and index entries were: a store, a file or both ('' for either
 * side that is not narrowed), up to the chunk id the database had reached.
 * Those rows then go in small batches between other work, resumed after a
 * restart; `up_to` keeps a file added to the same store again out of the
 * purge. `fs_chunks_by_file` lets a file's chunks be found without its store.
 */
const PURGES: Record<SqlDatabase['kind'], readonly string[]> = {
  sqlite: [
    `CREATE TABLE IF NOT EXISTS fs_purges (id INTEGER PRIMARY KEY AUTOINCREMENT, store_id TEXT NOT NULL, file_id TEXT NOT NULL, up_to INTEGER NOT NULL, created_at BIGINT NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS fs_chunks_by_file ON fs_chunks (file_id, id)`,
  ],
  postgres: [
    `CREATE TABLE IF NOT EXISTS fs_purges (id BIGSERIAL PRIMARY KEY, store_id TEXT NOT NULL, file_id TEXT NOT NULL, up_to BIGINT NOT NULL, created_at BIGINT NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS fs_chunks_by_file ON fs_chunks (file_id, id)`,
  ],
};

/**
 * Version 5: the next waiting file is found in upload order through an
 * index, not by sorting every waiting row on each claim (`claimJob`): with
 * only `(status, lease_until)` a batch of N files cost N sorts of up to N
 * rows on the gateway's main thread.
 */
const WAITING_ORDER = [`CREATE INDEX IF NOT EXISTS fs_store_files_waiting ON fs_store_files (status, seq)`];

/** Applied in order, each once; a database at version 1 gets only what came after. */
const MIGRATIONS: ReadonlyArray<{ version: number; statements: (kind: SqlDatabase['kind']) => readonly string[] }> = [
  { version: 1, statements: (kind) => (kind === 'sqlite' ? SQLITE : POSTGRES) },
  { version: 2, statements: () => OWNERS },
  { version: 3, statements: (kind) => STORE_INDEX[kind] },
  { version: 4, statements: (kind) => PURGES[kind] },
  { version: 5, statements: () => WAITING_ORDER },
];

/** How long one statement of the schema change may wait for its answer (the lock between replicas is waited for apart: `takeAdvisoryXactLock`). */
export const SCHEMA_QUERY_TIMEOUT_MS = 120_000;

/** `upTo` stops at an older version: how the upgrade path is tested. */
export async function migrateFileSearch(db: SqlDatabase, upTo = MIGRATIONS.at(-1)!.version): Promise<void> {
  await db.tx(
    async (t) => {
      // Replicas starting together: one applies the schema, the others wait and find it done.
      if (t.kind === 'postgres') await takeAdvisoryXactLock((sql) => t.all(sql), `hashtext('switchyard:fs_schema:' || current_schema())`, 'the file-search schema');
      await t.run('CREATE TABLE IF NOT EXISTS fs_schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)');
      const done = new Set((await t.all<{ version: number }>('SELECT version FROM fs_schema_migrations')).map((r) => Number(r.version)));
      for (const m of MIGRATIONS) {
        if (done.has(m.version) || m.version > upTo) continue;
        for (const statement of m.statements(t.kind)) await t.run(statement);
        await t.run('INSERT INTO fs_schema_migrations (version, applied_at) VALUES (?, ?)', [m.version, Date.now()]);
      }
    },
    // Start-up, not a request: a statement may wait for locks other sessions hold on these tables, however busy the server.
    { queryTimeoutMs: SCHEMA_QUERY_TIMEOUT_MS },
  );
}
