import { LockWaitTimeoutError, lockTaken, waitForLock } from './lock-wait.js';

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

  it('reads a pg_try_advisory_xact_lock answer: only true is taken', () => {
    expect(lockTaken([{ locked: true }])).toBe(true);
    expect(lockTaken([{ locked: false }])).toBe(false);
    expect(lockTaken([])).toBe(false);
  });
});
