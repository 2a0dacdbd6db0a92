/**
 * Asks `probe` (which worker answered a fresh connection, or null while none
 * does) until `want` different workers have answered, pausing between all
 * rounds: while one worker is up and another still boots, every request
 * reaches the first, and asked back to back they took the CPU from the boot
 * they wait for. Bounded by count (80 s of pauses), so a gateway that never
 * gets there fails the caller's check instead of hanging.
 */
export async function workersAnswering(probe: () => Promise<string | null>, want: number): Promise<Set<string>> {
  const up = new Set<string>();
  for (let i = 0; i < 1_600 && up.size < want; i++) {
    const worker = await probe().catch(() => null);
    if (worker !== null) up.add(worker);
    if (up.size < want) await new Promise((r) => setTimeout(r, 50));
  }
  return up;
}
