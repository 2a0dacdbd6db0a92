import type { Migration } from '../shared/migration.interface.js';

/**
 * The usage table's own migrations, recorded in `usage_migrations` beside
 * (not in) the state store's `schema_migrations`: the usage store is opened
 * on its own connection and also serves under a `STATE_STORE` override.
 * One statement set serves both drivers: the types used mean the same in SQLite and PostgreSQL.
 */
export const USAGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'usage_minutes',
    sql: `
      CREATE TABLE usage_minutes (
        minute BIGINT NOT NULL,
        owner TEXT NOT NULL,
        model TEXT NOT NULL,
        surface TEXT NOT NULL,
        requests BIGINT NOT NULL,
        input_tokens BIGINT NOT NULL,
        cached_input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        reasoning_tokens BIGINT NOT NULL,
        PRIMARY KEY (minute, owner, model, surface)
      );
      CREATE INDEX usage_minutes_by_owner ON usage_minutes (owner, minute);
    `,
  },
];

/** Adds one run to its minute's row (both drivers speak this upsert). */
export const USAGE_UPSERT_COLUMNS = 'minute, owner, model, surface, requests, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens';
export const USAGE_ON_CONFLICT = `ON CONFLICT (minute, owner, model, surface) DO UPDATE SET
  requests = usage_minutes.requests + excluded.requests,
  input_tokens = usage_minutes.input_tokens + excluded.input_tokens,
  cached_input_tokens = usage_minutes.cached_input_tokens + excluded.cached_input_tokens,
  output_tokens = usage_minutes.output_tokens + excluded.output_tokens,
  reasoning_tokens = usage_minutes.reasoning_tokens + excluded.reasoning_tokens`;

export const USAGE_SUMS =
  'SUM(requests) AS requests, SUM(input_tokens) AS input_tokens, SUM(cached_input_tokens) AS cached_input_tokens, SUM(output_tokens) AS output_tokens, SUM(reasoning_tokens) AS reasoning_tokens';

export interface UsageSqlRow {
  bucket: number | string;
  owner: string;
  model: string;
  surface: string;
  requests: number | string;
  input_tokens: number | string;
  cached_input_tokens: number | string;
  output_tokens: number | string;
  reasoning_tokens: number | string;
}
