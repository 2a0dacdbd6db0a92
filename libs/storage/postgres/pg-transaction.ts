import type pg from 'pg';

/**
 * Runs `fn` in one transaction on one pooled connection. A connection whose
 * ROLLBACK failed is unusable: releasing it with the error makes the pool
 * discard it instead of handing it to the next caller.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, translate: (e: unknown) => unknown = (e) => e): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
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
    client.release(broken);
  }
}
