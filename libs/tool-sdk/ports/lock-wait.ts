import { setTimeout as sleep } from 'node:timers/promises';

/** How long a starting process waits for another one's schema change before it gives up. */
export const SCHEMA_LOCK_WAIT_MS = 300_000;

/** The first pause between two tries, doubled after each up to the last. */
const FIRST_PAUSE_MS = 10;
const LONGEST_PAUSE_MS = 250;

/** Another process held the lock for longer than the caller would wait. */
export class LockWaitTimeoutError extends Error {}

/**
 * Waits for a lock by trying it (`tryLock`: PostgreSQL's
 * `pg_try_advisory_xact_lock`, which answers at once) until it is taken.
 *
 * Why not `pg_advisory_xact_lock`, which waits in the server: a statement is
 * bounded by the pool's query timeout (`storage.queryTimeoutMs`, 5 s by
 * default), so a replica that started while another was applying a
 * migration failed its start-up with "Query read timeout" whenever the
 * migration took longer than that (seen with two replicas starting together
 * on a busy machine). Each try here is one short statement, and the wait is
 * bounded by `waitMs` instead, as long as a migration may take.
 *
 * `what` names the locked thing in the error, e.g. "the usage tables' schema".
 */
export async function waitForLock(tryLock: () => Promise<boolean>, what: string, waitMs = SCHEMA_LOCK_WAIT_MS): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
    if (await tryLock()) return;
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new LockWaitTimeoutError(
        `Another process held the lock on ${what} for ${Math.round(waitMs / 1000)} s: a migration still running there, or a session that took the lock and stays open.`,
      );
    }
    await sleep(Math.min(pause, left));
  }
}

/** Runs one statement in the caller's transaction and gives its rows: a `pg` client's query, or `SqlDatabase.all` inside `tx`. */
export type LockQuery = (sql: string) => Promise<ReadonlyArray<{ locked?: unknown }>>;

/**
 * Takes PostgreSQL's transaction-scoped advisory lock on `key`, waiting for
 * it as `waitForLock` does. `key` is a SQL expression of the caller's own,
 * never input: `hashtext('my:schema')`, or `$1` with `query` binding it.
 */
export function takeAdvisoryXactLock(query: LockQuery, key: string, what: string, waitMs?: number): Promise<void> {
  const sql = `SELECT pg_try_advisory_xact_lock(${key}) AS locked`;
  return waitForLock(async () => (await query(sql))[0]?.locked === true, what, waitMs);
}
