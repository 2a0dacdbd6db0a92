import { LockWaitTimeoutError, takeAdvisoryXactLock, waitForLock } from './lock-wait.js';

describe('waitForLock', () => {
  it('tries again until the lock is taken', async () => {
    const answers = [false, false, false, true];
    let tries = 0;
    await waitForLock(async () => answers[tries++], 'the test schema', 10_000);
    expect(tries).toBe(4);
  });

  it('gives up after the wait it was given, naming what it waited for', async () => {
    let tries = 0;
    const waited = waitForLock(
      async () => {
        tries++;
        return false;
      },
      'the test schema',
      200,
    );
    await expect(waited).rejects.toThrow(LockWaitTimeoutError);
    await expect(waited).rejects.toThrow(/the test schema/);
    expect(tries).toBeGreaterThan(1);
  });

  it('tries pg_try_advisory_xact_lock on the given key until its answer is true', async () => {
    const answers: Array<Array<{ locked?: unknown }>> = [[{ locked: false }], [], [{ locked: 't' }], [{ locked: true }]];
    const asked: string[] = [];
    await takeAdvisoryXactLock(
      async (sql) => {
        asked.push(sql);
        return answers[asked.length - 1];
      },
      `hashtext('x')`,
      'the test schema',
      10_000,
    );
    expect(asked).toEqual(Array(4).fill(`SELECT pg_try_advisory_xact_lock(hashtext('x')) AS locked`));
  });
});
