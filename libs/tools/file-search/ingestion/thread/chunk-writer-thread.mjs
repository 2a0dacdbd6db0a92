// The chunk writer: one thread per extraction pool that completes SQLite
// ingestion jobs (a file's chunks, their index entries and its `completed`
// status, in one transaction) through a better-sqlite3 connection of its
// own. The ingestion threads send it prepared files over ports of their own
// (`{ port }` messages from the pool); the gateway's event loop never runs
// these writes. It runs at the gateway's priority, not the ingestion
// threads' lower one: while it writes it holds the database's write lock,
// which the gateway's own writes (claims, uploads) wait for, so it must not
// be the thread the scheduler starves.
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import { completeWithChunks, rowsFromIndex } from './chunk-writes.mjs';

const requireDriver = createRequire(import.meta.url);
/** Connections by database file: opened on first use, closed with the thread. */
const connections = new Map();

/**
 * A connection to the file-search database, as the `{ run, all }` that
 * `completeWithChunks` writes through (statements prepared once). Waiting
 * for the main thread's lock sleeps this thread alone; the main thread's
 * writes are short.
 */
function connection(file) {
  let c = connections.get(file);
  if (c) return c;
  const Database = requireDriver('better-sqlite3');
  const db = new Database(file);
  db.pragma('busy_timeout = 30000');
  db.pragma('foreign_keys = ON');
  db.pragma('temp_store = MEMORY');
  const statements = new Map();
  const statement = (sql) => {
    let s = statements.get(sql);
    if (!s) {
      // Multi-row INSERTs differ only in their last, shorter statement: a few hundred shapes at most.
      if (statements.size > 500) statements.clear();
      statements.set(sql, (s = db.prepare(sql)));
    }
    return s;
  };
  c = { db, run: (sql, params) => statement(sql).run(...params).changes, all: (sql, params) => statement(sql).all(...params) };
  connections.set(file, c);
  return c;
}

/** One job's transaction; false when the job was no longer the worker's (nothing written). */
async function complete({ write, text, ends, terms }) {
  const rows = rowsFromIndex(text, ends, terms);
  const usageBytes = rows.reduce((n, r) => n + Buffer.byteLength(r.text), 0);
  const c = connection(write.file);
  c.db.exec('BEGIN IMMEDIATE');
  try {
    const completed = await completeWithChunks(c, { storeId: write.storeId, fileId: write.fileId, worker: write.worker, usageBytes }, rows);
    c.db.exec('COMMIT');
    return completed;
  } catch (e) {
    if (c.db.inTransaction) c.db.exec('ROLLBACK');
    throw e;
  }
}

/** Jobs run one at a time, whichever port they came from: SQLite has one writer anyway. */
let queue = Promise.resolve();

parentPort?.on('message', ({ port }) => {
  port.on('message', (request) => {
    queue = queue.then(async () => {
      try {
        port.postMessage({ id: request.id, completed: await complete(request) });
      } catch (e) {
        port.postMessage({ id: request.id, failure: `writing the chunks failed: ${e?.message ?? e}` });
      }
    });
  });
});
