/**
 * One schema step. Versions are applied in ascending order, each exactly once,
 * and recorded in `schema_migrations`; a shipped migration is never edited,
 * only followed by a new one.
 */
export interface Migration {
  version: number;
  name: string;
  /** One or more statements, run inside the migration transaction. */
  sql: string;
}
