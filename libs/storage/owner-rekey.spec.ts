import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { legacyOwnerIdOf, ownerIdOf } from '#config/owner-ids.js';
import { newId } from '#tool-sdk/ids.js';
import { rekeyPostgresOwners, rekeySqliteOwners, rekeyStoredOwners } from './owner-rekey.js';
import { PostgresStateStore } from './postgres/postgres-state-store.js';
import { SqliteStateStore } from './sqlite/sqlite-state-store.js';
import type { StateStore, StoredResponse } from './state-store.interface.js';
import { PostgresUsageStore } from './usage/postgres-usage.store.js';
import { SqliteUsageStore } from './usage/sqlite-usage.store.js';
import type { UsageStore } from './usage-store.interface.js';

/**
 * Stored rows and usage move from a key's SHA-256 to its keyed id, on both
 * databases, for the configured keys only, once however often it runs.
 */
const SECRET = Buffer.from('a-deployment-secret-for-this-spec-000000');
const KEY = 'sk-configured-key';
const GONE = 'sk-key-no-longer-configured';
const pairs = [{ from: legacyOwnerIdOf(KEY), to: ownerIdOf(SECRET, KEY) }];
const MINUTE = 1_760_000_040_000;

function stored(owner: string): StoredResponse {
  const id = newId('resp');
  return {
    id,
    owner,
    createdAt: 1_760_000_000,
    previousResponseId: null,
    conversationId: null,
    status: 'completed',
    response: { id, object: 'response', status: 'completed', output: [], metadata: {}, error: null },
    inputItems: [],
    modelItems: [],
    tools: [],
    toolChoice: 'auto',
  };
}

const usage = (owner: string, inputTokens: number) => ({
  owner,
  model: 'm',
  surface: 'responses',
  at: MINUTE + 5_000,
  inputTokens,
  cachedInputTokens: 0,
  outputTokens: 1,
  reasoningTokens: 0,
});

/** Writes the rows a gateway of the old ids left, rewrites, and checks what each id now reaches. */
async function exercise(open: () => Promise<{ state: StateStore; usage: UsageStore }>, rekey: () => Promise<Record<string, number>>): Promise<void> {
  let stores = await open();
  const mine = stored(legacyOwnerIdOf(KEY));
  const theirs = stored(legacyOwnerIdOf(GONE));
  await stores.state.saveResponse(mine);
  await stores.state.saveResponse(theirs);
  // The same minute under both ids: an old worker still wrote the legacy id while a new one wrote the keyed id.
  await stores.usage.record(usage(legacyOwnerIdOf(KEY), 10));
  await stores.usage.record(usage(ownerIdOf(SECRET, KEY), 5));
  await stores.usage.record(usage(legacyOwnerIdOf(GONE), 7));
  await Promise.all([stores.state.close(), stores.usage.close()]);

  const changed = await rekey();
  expect(changed).toMatchObject({ responses: 1, usage_minutes: 1 });
  // Idempotent: a second worker or the next boot finds nothing left to move.
  expect(await rekey()).toEqual({});

  stores = await open();
  try {
    expect((await stores.state.getResponse(mine.id, ownerIdOf(SECRET, KEY)))?.owner).toBe(ownerIdOf(SECRET, KEY));
    expect(await stores.state.getResponse(mine.id, legacyOwnerIdOf(KEY))).toBeNull();
    // A key no longer configured cannot be mapped: its rows keep the old id, reached by no key.
    expect((await stores.state.getResponse(theirs.id, legacyOwnerIdOf(GONE)))?.owner).toBe(legacyOwnerIdOf(GONE));
    const rows = await stores.usage.query({ from: MINUTE - 60_000, to: MINUTE + 120_000, bucketMs: 60_000, limit: 100 });
    const byOwner = Object.fromEntries(rows.map((r) => [r.owner, r]));
    expect(byOwner[ownerIdOf(SECRET, KEY)]).toMatchObject({ requests: 2, inputTokens: 15 });
    expect(byOwner[legacyOwnerIdOf(KEY)]).toBeUndefined();
    expect(byOwner[legacyOwnerIdOf(GONE)]).toMatchObject({ requests: 1, inputTokens: 7 });
  } finally {
    await Promise.all([stores.state.close(), stores.usage.close()]);
  }
}

describe('owner id rewrite', () => {
  it('SQLite: rewrites stored responses and usage of the configured keys', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-rekey-'));
    const path = join(dir, 'state.sqlite');
    try {
      await exercise(
        async () => {
          const state = new SqliteStateStore({ path });
          const usageStore = new SqliteUsageStore({ path });
          await state.init();
          await usageStore.init();
          return { state, usage: usageStore };
        },
        () => rekeySqliteOwners(path, pairs),
      );
      // Through the driver's entry point, too (the state file and, beside it, files and batches when present).
      expect(await rekeyStoredOwners({ driver: 'sqlite', sqlitePath: path }, pairs)).toEqual({});
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('SQLite: a file that does not exist, or the memory driver, has nothing to rewrite', async () => {
    expect(await rekeySqliteOwners(join(tmpdir(), `sy-none-${process.pid}.sqlite`), pairs)).toEqual({});
    expect(await rekeyStoredOwners({ driver: 'memory', sqlitePath: ':memory:' }, pairs)).toEqual({});
  });

  it('PostgreSQL: the same, in a schema of its own; two replicas rewriting at once move each row once', async () => {
    const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const schema = `sy_rekey_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = `${base}?options=-c%20search_path%3D${schema}`;
    try {
      let racing = false;
      await exercise(
        async () => {
          const state = new PostgresStateStore({ connectionString: url, schema });
          const usageStore = new PostgresUsageStore({ connectionString: url, schema });
          await state.init();
          await usageStore.init();
          return { state, usage: usageStore };
        },
        async () => {
          if (racing) return rekeyPostgresOwners(url, pairs);
          racing = true;
          // Two replicas booting together: between them every row moves once, usage is summed once.
          const [a, b] = await Promise.all([rekeyPostgresOwners(url, pairs), rekeyPostgresOwners(url, pairs)]);
          const merged: Record<string, number> = {};
          for (const part of [a, b]) for (const [t, n] of Object.entries(part)) merged[t] = (merged[t] ?? 0) + n;
          return merged;
        },
      );
    } finally {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  }, 60_000);
});
