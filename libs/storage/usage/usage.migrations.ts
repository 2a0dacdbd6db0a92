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
  {
    // Every run counts in \`runs\` (with or without tokens), so the console can show error rates
    // and mean latency per minute; \`requests\` stays the runs that used tokens, as the usage API reports.
    version: 2,
    name: 'usage_minutes_runs',
    sql: `
      ALTER TABLE usage_minutes ADD COLUMN runs BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE usage_minutes ADD COLUMN failed_runs BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE usage_minutes ADD COLUMN duration_ms BIGINT NOT NULL DEFAULT 0;
    `,
  },
  {
    // What a run did, round by round, for the console's run view: one row per response, kept a bounded time.
    version: 3,
    name: 'run_timelines',
    sql: `
      CREATE TABLE run_timelines (
        response_id TEXT NOT NULL PRIMARY KEY,
        owner TEXT NOT NULL,
        at BIGINT NOT NULL,
        body TEXT NOT NULL
      );
      CREATE INDEX run_timelines_by_time ON run_timelines (at);
    `,
  },
];

/** Adds one run to its minute's row (both drivers speak this upsert). */
export const USAGE_UPSERT_COLUMNS = 'minute, owner, model, surface, requests, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, runs, failed_runs, duration_ms';
/** Values per upserted row: the columns above. */
export const USAGE_WIDTH = 12;
export const USAGE_ON_CONFLICT = `ON CONFLICT (minute, owner, model, surface) DO UPDATE SET
  requests = usage_minutes.requests + excluded.requests,
  input_tokens = usage_minutes.input_tokens + excluded.input_tokens,
  cached_input_tokens = usage_minutes.cached_input_tokens + excluded.cached_input_tokens,
  output_tokens = usage_minutes.output_tokens + excluded.output_tokens,
  reasoning_tokens = usage_minutes.reasoning_tokens + excluded.reasoning_tokens,
  runs = usage_minutes.runs + excluded.runs,
  failed_runs = usage_minutes.failed_runs + excluded.failed_runs,
  duration_ms = usage_minutes.duration_ms + excluded.duration_ms`;

export const USAGE_SUMS =
  'SUM(requests) AS requests, SUM(input_tokens) AS input_tokens, SUM(cached_input_tokens) AS cached_input_tokens, SUM(output_tokens) AS output_tokens, SUM(reasoning_tokens) AS reasoning_tokens, SUM(runs) AS runs, SUM(failed_runs) AS failed_runs, SUM(duration_ms) AS duration_ms';

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
  runs: number | string;
  failed_runs: number | string;
  duration_ms: number | string;
}
