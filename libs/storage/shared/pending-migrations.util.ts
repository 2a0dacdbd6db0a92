import type { Migration } from './migration.interface.js';

/**
 * The migrations not yet applied, in version order. Applied versions this
 * build does not know (a newer replica migrated first during a rolling
 * upgrade) are ignored rather than refused: migrations only add.
 */
export function pendingMigrations(all: readonly Migration[], applied: Iterable<number>): Migration[] {
  const done = new Set(applied);
  const sorted = [...all].sort((a, b) => a.version - b.version);
  sorted.forEach((m, i) => {
    if (!Number.isInteger(m.version) || m.version < 1 || (i > 0 && sorted[i - 1].version === m.version)) {
      throw new Error(`Migration versions must be distinct positive integers; check version ${m.version} (${m.name}).`);
    }
  });
  return sorted.filter((m) => !done.has(m.version));
}
