/**
 * How a process's free batch slots are split between the owners with
 * batches running: one slot at a time to the owner holding the fewest
 * (running here plus given so far), so an owner whose batch arrives behind
 * another's 50,000 lines gets the next free slot rather than the one after
 * those lines. Ties go round the owners from `turn`, so no owner is always
 * first when the slots do not divide evenly.
 */
export function shareSlots(free: number, owners: readonly string[], running: ReadonlyMap<string, number>, turn: number): Map<string, number> {
  const given = new Map<string, number>();
  if (owners.length === 0 || free <= 0) return given;
  const order = owners.map((_, i) => owners[(i + turn) % owners.length]);
  for (let slot = 0; slot < free; slot++) {
    let best = order[0];
    let least = Infinity;
    for (const owner of order) {
      const held = (running.get(owner) ?? 0) + (given.get(owner) ?? 0);
      if (held < least) {
        least = held;
        best = owner;
      }
    }
    given.set(best, (given.get(best) ?? 0) + 1);
  }
  return given;
}
