import type pg from 'pg';

/**
 * Runs `fn` in one transaction on one pooled connection. A connection whose
 * ROLLBACK failed is unusable: releasing it with the error makes the pool
 * discard it instead of handing it to the next caller.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, translate: (e: unknown) => unknown = (e) => e): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (e) {
    // No connection at all (database unreachable, connect timeout): the caller's translation applies too.
    throw translate(e);
  }
  let broken: Error | undefined;
  // A checked-out connection the server drops emits 'error' with no pool listener on it, which
  // would end the process; the query in flight rejects with it anyway, and release discards it.
  const dropped = (e: Error) => (broken = e);
  client.on('error', dropped);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw translate(e);
  } finally {
    client.off('error', dropped);
    client.release(broken);
  }
}
