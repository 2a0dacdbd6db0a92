// How a file's ingestion is completed in the database: its chunks and their
// index entries written and its row marked `completed`, in the caller's
// transaction. Plain JavaScript so that the ingestion thread (writing
// through a SQLite connection of its own) and the main thread (PostgreSQL,
// SQLite `:memory:`, or chunks with embeddings, through
// `FileSearchStore.completeJob`) run the same statements. `t` is a
// transaction's `{ run(sql, params), all(sql, params) }`, synchronous or
// returning promises alike.

/** Chunks per INSERT: a few hundred kilobytes of text at most per statement. */
export const CHUNKS_PER_STATEMENT = 100;
/** Index rows per INSERT: few statements, well under either database's bound on parameters. */
export const POSTINGS_PER_STATEMENT = 250;

const values = (rows, columns) => Array.from({ length: rows }, () => `(${Array.from({ length: columns }, () => '?').join(', ')})`).join(', ');

/**
 * An INSERT of `rows` rows, its text built once per row count: a statement of
 * 250 rows is a few kilobytes of SQL, and building it for every statement
 * of a file's hundreds of thousands of index rows cost as much as a good
 * part of the inserts themselves.
 */
function inserter(head, columns) {
  const built = new Map();
  return (rows) => {
    let sql = built.get(rows);
    if (sql === undefined) built.set(rows, (sql = `${head} VALUES ${values(rows, columns)}`));
    return sql;
  };
}
/**
 * A file's earlier index entries in one store. `store_id || ''` keeps
 * SQLite's planner on `fs_postings_file` (file, store): given `store_id = ?`
 * it walked the primary key's store prefix instead, every entry of the
 * store, so that each file cost as much as the store it joined and a
 * store's ingestion grew with the square of its size.
 */
export const FILE_POSTINGS_DELETE = `DELETE FROM fs_postings WHERE file_id = ? AND store_id || '' = ?`;

const insertChunks = inserter('INSERT INTO fs_chunks (store_id, file_id, position, text, embedding, terms)', 6);
const insertPostings = inserter('INSERT INTO fs_postings (store_id, term, chunk_id, file_id, tf, len)', 6);

/**
 * Marks the job completed and writes its chunks, only if `job.worker` still
 * holds it and nobody cancelled or removed it meanwhile (false otherwise,
 * and nothing is written). `chunks` are `{ position, text, embedding
 * (Buffer or null), terms: { length, counts: [[term, tf], ...] } }`.
 * `pause`, when given, is awaited after about every `rowsPerPause` rows
 * (the main thread lets requests run between slices).
 */
export async function completeWithChunks(t, job, chunks, pause, rowsPerPause = 2000) {
  const { storeId, fileId, worker, usageBytes } = job;
  const updated = await t.run(
    `UPDATE fs_store_files SET status = 'completed', usage_bytes = ?, claimed_by = NULL, lease_until = NULL, last_error = NULL
     WHERE store_id = ? AND file_id = ? AND claimed_by = ? AND status = 'in_progress'`,
    [usageBytes, storeId, fileId, worker],
  );
  if (Number(updated) === 0) return false;
  // An earlier ingestion of the same file in the same store. Without one (the usual case) there is nothing to delete.
  const earlier = await t.all('SELECT id FROM fs_chunks WHERE store_id = ? AND file_id = ? LIMIT 1', [storeId, fileId]);
  if (earlier.length > 0) {
    await t.run(FILE_POSTINGS_DELETE, [fileId, storeId]);
    await t.run('DELETE FROM fs_chunks WHERE store_id = ? AND file_id = ?', [storeId, fileId]);
  }
  let sincePause = 0;
  // Index rows waiting for a full statement, as its flat parameter list (six a row).
  let postings = [];
  const flushPostings = async (all) => {
    const perStatement = POSTINGS_PER_STATEMENT * 6;
    let from = 0;
    while (postings.length - from >= perStatement || (all && postings.length > from)) {
      const params = postings.slice(from, (from += perStatement));
      await t.run(insertPostings(params.length / 6), params);
      sincePause += params.length / 6;
      if (pause && sincePause >= rowsPerPause) {
        sincePause = 0;
        await pause();
      }
    }
    postings = postings.slice(from);
  };
  for (let i = 0; i < chunks.length; i += CHUNKS_PER_STATEMENT) {
    const slice = chunks.slice(i, i + CHUNKS_PER_STATEMENT);
    const params = slice.flatMap((c) => [storeId, fileId, c.position, c.text, c.embedding ?? null, c.terms.length]);
    // RETURNING's row order is not promised: each id is matched to its chunk by position (unique in a file).
    const rows = await t.all(`${insertChunks(slice.length)} RETURNING id, position`, params);
    const idAt = new Map(rows.map((r) => [Number(r.position), Number(r.id)]));
    for (const c of slice) {
      const chunkId = idAt.get(c.position);
      for (const [term, tf] of c.terms.counts) postings.push(storeId, term, chunkId, fileId, tf, c.terms.length);
    }
    sincePause += slice.length;
    await flushPostings(false);
  }
  await flushPostings(true);
  return true;
}

/**
 * Chunks as the ingestion thread sends them across threads: their texts as
 * one string with its cut points (`ends`), and their index entries as one
 * line per chunk (`length term count term count ...`; terms are letters and
 * digits only). A few strings cross as a few copies, where each chunk's
 * objects would be thousands of allocations on the other side.
 */
export function rowsFromIndex(text, ends, lines) {
  const rows = [];
  if (ends.length === 0) return rows;
  let from = 0;
  let position = 0;
  for (const line of lines.split('\n')) {
    const parts = line.split(' ');
    const counts = [];
    for (let i = 1; i + 1 < parts.length; i += 2) counts.push([parts[i], Number(parts[i + 1])]);
    const end = ends[position];
    rows.push({ position, text: text.slice(from, end), embedding: null, terms: { length: Number(parts[0]), counts } });
    from = end;
    position++;
  }
  return rows;
}
