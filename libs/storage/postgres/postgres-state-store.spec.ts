import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { newId } from '#tool-sdk/ids.js';
import type { StoredResponse } from '../state-store.interface.js';
import { catalogSql } from '../shared/list-window.util.js';
import { describeStateStoreContract } from '../testing/state-store.contract.js';
import { PostgresBackgroundStore } from './postgres-background.store.js';
import { PostgresContainerRecordStore } from './postgres-container-record.store.js';
import { POSTGRES_MIGRATIONS } from './postgres.migrations.js';
import { PostgresStateStore } from './postgres-state-store.js';
import { answerOf } from '#edge/testing/answered.js';

const { Pool } = pg;

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// Every run works in schemas of its own, so parallel runs on one database never collide.
const runTag = randomBytes(4).toString('hex');
const schemas: string[] = [];
let admin: pg.Pool;

const freshSchema = (): string => {
  const schema = `sy_test_${runTag}_${schemas.length}`;
  schemas.push(schema);
  return schema;
};

const storeIn = (schema: string): PostgresStateStore => new PostgresStateStore({ connectionString: url, schema, maxConnections: 4 });

/** Runs `fn` on an initialised store in `schema` (a fresh one by default), closing it afterwards. */
async function withStore(fn: (store: PostgresStateStore) => Promise<void>, schema = freshSchema()): Promise<void> {
  const store = storeIn(schema);
  await store.init();
  try {
    await fn(store);
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  admin = new Pool({ connectionString: url, max: 2 });
  admin.on('error', () => undefined);
  try {
    await admin.query('SELECT 1');
  } catch (e) {
    throw new Error(`PostgreSQL is not reachable at ${url} (set DATABASE_URL): ${(e as Error).message}`, { cause: e });
  }
});

afterAll(async () => {
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});

describeStateStoreContract('postgres', () => storeIn(freshSchema()));

describe('PostgresStateStore', () => {
  const response = (owner: string | null): StoredResponse => {
    const id = newId('resp');
    return {
      id,
      owner,
      createdAt: 1_760_000_000,
      previousResponseId: null,
      conversationId: null,
      status: 'completed',
      response: { id, object: 'response', output: [] },
      inputItems: [{ id: newId('msg'), type: 'message', role: 'user', content: 'hi' }],
      modelItems: [{ type: 'message', role: 'user', content: 'hi' }],
      tools: [],
      toolChoice: 'auto',
    };
  };

  it('makes a saved response readable by another instance at once', async () => {
    const schema = freshSchema();
    const a = storeIn(schema);
    const b = storeIn(schema);
    await a.init();
    await b.init();
    try {
      for (let i = 0; i < 5; i++) {
        const r = response('key');
        await a.saveResponse(r);
        expect(await b.getResponse(r.id, 'key')).toEqual(r);
        expect(await b.deleteResponse(r.id, 'key')).toBe(true);
        expect(await a.getResponse(r.id, 'key')).toBeNull();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('gives appends from two instances distinct positions', async () => {
    const schema = freshSchema();
    const a = storeIn(schema);
    const b = storeIn(schema);
    await a.init();
    await b.init();
    try {
      const id = newId('conv');
      await a.createConversation({ id, owner: 'key', createdAt: 1, metadata: {} }, []);
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 === 0 ? a : b).addConversationItems(id, 'key', [
            { type: 'message', role: 'user', content: `${i}` },
            { type: 'message', role: 'assistant', content: `${i}` },
          ]),
        ),
      );
      const page = (await b.listConversationItems(id, 'key', { order: 'asc', limit: 100 }))!;
      expect(page.data.map((entry) => entry.position)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('can read a console page from the catalog index of every listed table, without sorting the table', async () => {
    const schema = freshSchema();
    const stores = [storeIn(schema), new PostgresBackgroundStore({ connectionString: url, schema }), new PostgresContainerRecordStore({ connectionString: url, schema })];
    for (const store of stores) await store.init();
    const client = await admin.connect();
    try {
      // Tables this small are cheaper to sort, so the planner is told to avoid sorts: a plan left with one could not use an index.
      await client.query(`SET search_path = ${schema}; SET enable_sort = off; SET enable_seqscan = off`);
      for (const [table, created, readSort] of [
        ['responses', 'created_at', 'created_at'],
        ['conversations', 'created_at', 'created_at'],
        ['background_runs', 'floor(extract(epoch from created_at))::bigint', 'created_at::text'],
        ['code_containers', '(created_at / 1000)', 'created_at'],
      ]) {
        const mark = (n: number) => `$${n}`;
        const explain = async (sql: string, args: unknown[]) =>
          (await client.query<{ 'QUERY PLAN': string }>({ text: `EXPLAIN ${sql}`, values: args })).rows.map((r) => r['QUERY PLAN']).join('\n');
        const first = await explain(catalogSql(table, created, mark, false, 'created_at', readSort).pageSql, [10]);
        const cursor = table === 'background_runs' ? '2026-01-01 00:00:00+00' : 1;
        const next = await explain(catalogSql(table, created, mark, true, 'created_at', readSort).pageSql, [cursor, 'x', 10]);
        for (const plan of [first, next]) {
          expect(plan).toContain(`${table}_catalog`);
          expect(plan).not.toMatch(/\bSort\b/);
        }
      }
    } finally {
      client.release();
      for (const store of stores) await store.close();
    }
  });

  it('migrates once when several replicas start together', async () => {
    const schema = freshSchema();
    const replicas = Array.from({ length: 4 }, () => storeIn(schema));
    try {
      await Promise.all(replicas.map((store) => store.init()));
      const { rows } = await admin.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
      expect(rows.map((row: { version: number }) => row.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
      // A later start finds nothing to do.
      const late = storeIn(schema);
      await late.init();
      await late.close();
    } finally {
      await Promise.all(replicas.map((store) => store.close()));
    }
  });

  it('keeps no index on input items that nothing reads: a response is read by its key, an item by its id', async () => {
    const schema = freshSchema();
    const store = storeIn(schema);
    await store.init();
    await store.close();
    const { rows } = await admin.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'response_input_items' ORDER BY indexname`, [
      schema,
    ]);
    expect(rows.map((row) => row.indexname)).toEqual(['response_input_items_by_item', 'response_input_items_pkey']);
  });

  it('stores JSON in jsonb columns', async () => {
    const schema = freshSchema();
    const store = storeIn(schema);
    await store.init();
    await store.close();
    const { rows } = await admin.query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
       WHERE table_schema = $1 AND column_name IN ('response', 'model_items', 'tools', 'tool_choice', 'extra', 'item', 'metadata')`,
      [schema],
    );
    expect(rows).toHaveLength(9);
    expect(new Set(rows.map((row) => row.data_type))).toEqual(new Set(['jsonb']));
  });

  it('honours a search_path given in the connection string', async () => {
    const schema = freshSchema();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const store = new PostgresStateStore({ connectionString: `${url}?options=-c%20search_path%3D${schema}` });
    await store.init();
    try {
      const r = response(null);
      await store.saveResponse(r);
      const { rows } = await admin.query(`SELECT id FROM ${schema}.responses`);
      expect(rows).toEqual([{ id: r.id }]);
    } finally {
      await store.close();
    }
  });

  it('keeps a response whose model or tool text holds NUL or a lone surrogate, with U+FFFD in their place', async () => {
    await withStore(async (store) => {
      const r = response('key');
      // Client text is refused at the edge; this is what a model or a tool may still produce.
      r.inputItems.push({ type: 'message', role: 'user', content: 'a\u0000b \ud800c \\u0000 \ud83d\ude00' });
      (r.response as any).output = [{ id: 'msg_x', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'x\udc00\u0000', annotations: [] }] }];
      (r.response as any).metadata = { 'k\u0000': 'v' };
      await store.saveResponse(r);
      const back = await store.getResponse(r.id, 'key');
      expect(back!.inputItems.at(-1)).toMatchObject({ content: 'a\ufffdb \ufffdc \\u0000 \ud83d\ude00' });
      expect((back!.response as any).output[0].content[0].text).toBe('x\ufffd\ufffd');
      expect((back!.response as any).metadata).toEqual({ 'k\ufffd': 'v' });
    });
  });

  it('answers a NUL in an id or owner with a 400, not a driver error', async () => {
    await withStore(async (store) => {
      await expect(answerOf(store.getResponse('resp_\u0000', 'key'))).resolves.toMatchObject({ status: 400, code: 'unsupported_unicode' });
      await expect(answerOf(store.getConversation('conv_\u0000', 'key'))).resolves.toMatchObject({ status: 400, code: 'unsupported_unicode' });
      const r = response('key\u0000');
      await expect(answerOf(store.saveResponse(r))).resolves.toMatchObject({ status: 400, code: 'unsupported_unicode' });
    });
  });

  describe('group commit of responses outside a conversation', () => {
    /** Counts the INSERT statements on `responses` in `schema` (a statement-level trigger), not the rows. */
    const countInsertStatements = async (schema: string): Promise<() => Promise<number>> => {
      await admin.query(`
        CREATE TABLE ${schema}.insert_statements (n integer NOT NULL);
        INSERT INTO ${schema}.insert_statements VALUES (0);
        CREATE FUNCTION ${schema}.count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN UPDATE ${schema}.insert_statements SET n = n + 1; RETURN NULL; END $$;
        CREATE TRIGGER count_insert AFTER INSERT ON ${schema}.responses FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.count_insert();`);
      return async () => (await admin.query(`SELECT n FROM ${schema}.insert_statements`)).rows[0].n;
    };

    it.each([100, 1_000])('writes %i saves of one tick in statements of at most 64, every one readable with its items', async (n) => {
      const schema = freshSchema();
      await withStore(async (store) => {
        const statements = await countInsertStatements(schema);
        const saved = Array.from({ length: n }, () => response('key'));
        saved.forEach((r, i) => ((r.response as any).output = [{ id: `msg_out_${i}`, type: 'message', role: 'assistant', content: [] }]));
        await Promise.all(saved.map((r) => store.saveResponse(r)));
        expect(await statements()).toBe(Math.ceil(n / 64));
        for (const r of [saved[0], saved[n >> 1], saved[n - 1]]) expect(await store.getResponse(r.id, 'key')).toEqual(r);
        const items = await admin.query(
          `SELECT count(*)::int AS inputs, (SELECT count(*)::int FROM ${schema}.response_output_items) AS outputs FROM ${schema}.response_input_items`,
        );
        expect(items.rows[0]).toEqual({ inputs: n, outputs: n });
      }, schema);
    });

    it('fails only the save whose id is taken; the rest of its tick is stored', async () => {
      await withStore(async (store) => {
        const first = response('key');
        await store.saveResponse(first);
        const others = Array.from({ length: 20 }, () => response('key'));
        const clash = { ...first, status: 'failed', inputItems: [] };
        const results = await Promise.allSettled([...others.slice(0, 10), clash, ...others.slice(10)].map((r) => store.saveResponse(r)));
        expect(results.map((r) => r.status)).toEqual([...Array(10).fill('fulfilled'), 'rejected', ...Array(10).fill('fulfilled')]);
        expect((results[10] as PromiseRejectedResult).reason).toMatchObject({ name: 'DuplicateIdError', code: 'duplicate_response_id' });
        expect(await store.getResponse(first.id, 'key')).toEqual(first);
        for (const r of others) expect(await store.getResponse(r.id, 'key')).toEqual(r);
      });
    });

    it('keeps the first of two saves of one id in one tick', async () => {
      await withStore(async (store) => {
        const r = response('key');
        const [a, b] = await Promise.allSettled([store.saveResponse(r), store.saveResponse({ ...r, status: 'failed' })]);
        expect(a.status).toBe('fulfilled');
        expect((b as PromiseRejectedResult).reason).toMatchObject({ code: 'duplicate_response_id' });
        expect((await store.getResponse(r.id, 'key'))!.status).toBe('completed');
      });
    });

    it('answers a row the database cannot hold with a 400 for that save alone', async () => {
      await withStore(async (store) => {
        const good = [response('key'), response('key')];
        const bad = response('key\u0000');
        const [a, refused, b] = await Promise.allSettled([good[0], bad, good[1]].map((r) => store.saveResponse(r)));
        expect([a.status, b.status]).toEqual(['fulfilled', 'fulfilled']);
        await expect(answerOf(Promise.reject((refused as PromiseRejectedResult).reason))).resolves.toMatchObject({ status: 400, code: 'unsupported_unicode' });
        for (const r of good) expect(await store.getResponse(r.id, 'key')).toEqual(r);
      });
    });

    /** Makes the first INSERT statement on `responses` in `schema` take `seconds` (a statement-level trigger). */
    const slowFirstStatement = async (schema: string, seconds: number): Promise<void> => {
      await admin.query(`
        CREATE TABLE ${schema}.slowed (done boolean NOT NULL);
        INSERT INTO ${schema}.slowed VALUES (false);
        CREATE FUNCTION ${schema}.slow_first() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF NOT (SELECT done FROM ${schema}.slowed) THEN
              UPDATE ${schema}.slowed SET done = true;
              PERFORM pg_sleep(${seconds});
            END IF;
            RETURN NULL;
          END $$;
        CREATE TRIGGER slow_first AFTER INSERT ON ${schema}.responses FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.slow_first();`);
    };
    const ticks = (n: number) => Array.from({ length: n }).reduce<Promise<void>>((p) => p.then(() => new Promise((r) => setImmediate(r))), Promise.resolve());

    it('sends the saves that arrive while a batch is written, over several ticks, as one next batch', async () => {
      const schema = freshSchema();
      await withStore(async (store) => {
        const statements = await countInsertStatements(schema);
        await slowFirstStatement(schema, 0.3);
        const first = store.saveResponse(response('key'));
        // Three ticks of ten saves each while the first statement runs: one statement for all thirty.
        const later: Array<Promise<void>> = [];
        for (let tick = 0; tick < 3; tick++) {
          await ticks(2);
          for (let i = 0; i < 10; i++) later.push(store.saveResponse(response('key')));
        }
        await Promise.all([first, ...later]);
        expect(await statements()).toBe(2);
        // An idle store writes a save at once: its own statement.
        const alone = response('key');
        await store.saveResponse(alone);
        expect(await statements()).toBe(3);
        expect(await store.getResponse(alone.id, 'key')).toEqual(alone);
      }, schema);
    });

    it('writes the saves waiting behind a running batch before close ends', async () => {
      const schema = freshSchema();
      const store = storeIn(schema);
      await store.init();
      await slowFirstStatement(schema, 0.2);
      const saved = Array.from({ length: 5 }, () => response('key'));
      const first = store.saveResponse(saved[0]);
      await ticks(2);
      const waiting = saved.slice(1).map((r) => store.saveResponse(r));
      await store.close();
      await expect(Promise.all([first, ...waiting])).resolves.toHaveLength(5);
      const reader = storeIn(schema);
      await reader.init();
      try {
        for (const r of saved) expect(await reader.getResponse(r.id, 'key')).toEqual(r);
      } finally {
        await reader.close();
      }
    });

    it('writes the saves it accepted before close ends', async () => {
      const schema = freshSchema();
      const store = storeIn(schema);
      await store.init();
      const r = response('key');
      const saving = store.saveResponse(r);
      await store.close();
      await expect(saving).resolves.toBeUndefined();
      const reader = storeIn(schema);
      await reader.init();
      try {
        expect(await reader.getResponse(r.id, 'key')).toEqual(r);
      } finally {
        await reader.close();
      }
    });
  });

  it('refuses a schema name it would have to quote', () => {
    expect(() => new PostgresStateStore({ connectionString: url, schema: 'Bad; DROP' })).toThrow(/schema name/);
  });
});
