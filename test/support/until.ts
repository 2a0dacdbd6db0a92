/**
 * Polls `probe` until `done` holds: for state another process or replica
 * moves on its own time. Bounded by count, so a test fails with `what`
 * instead of hanging; tests set their own deadline above it.
 */
export async function until<T>(probe: () => Promise<T> | T, done: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 2_000; i++) {
    const value = await probe();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 15));
  }
  throw new Error(`timed out waiting for ${what}`);
}
