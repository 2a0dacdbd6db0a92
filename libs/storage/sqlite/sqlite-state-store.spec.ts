import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { newId } from '#tool-sdk/ids.js';
import { catalogSql } from '../shared/list-window.util.js';
import { describeStateStoreContract } from '../testing/state-store.contract.js';
import { SqliteBackgroundStore } from './sqlite-background.store.js';
import { SqliteContainerRecordStore } from './sqlite-container-record.store.js';
import { SqliteStateStore } from './sqlite-state-store.js';
import { SQLITE_MIGRATIONS } from './sqlite.migrations.js';

const root = mkdtempSync(join(tmpdir(), 'sy-sqlite-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let files = 0;
const freshPath = (): string => join(root, `db-${++files}`, 'nested', 'state.sqlite');

describeStateStoreContract('sqlite', () => new SqliteStateStore({ path: freshPath() }));

describe('SqliteStateStore', () => {
  it('creates the parent folders and opens the file in WAL mode with a busy timeout', async () => {
    const path = freshPath();
    const store = new SqliteStateStore({ path, busyTimeoutMs: 1234 });
    await store.init();
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
      expect(tables).toEqual(expect.arrayContaining(['conversation_items', 'conversations', 'response_input_items', 'responses', 'schema_migrations']));
    } finally {
      db.close();
    }
    const reopened = new SqliteStateStore({ path, busyTimeoutMs: 1234 });
    await reopened.init();
    // busy_timeout is per connection, so ask the store's own.
    expect((reopened as unknown as { connection: { db: Database.Database } }).connection.db.pragma('busy_timeout', { simple: true })).toBe(1234);
    await reopened.close();
  });

  it('reads a console page from the catalog index of every listed table, never sorting the whole table', async () => {
    const path = freshPath();
    const stores = [new SqliteStateStore({ path }), new SqliteBackgroundStore({ path }), new SqliteContainerRecordStore({ path })];
    for (const store of stores) await store.init();
    const db = new Database(path, { readonly: true });
    try {
      for (const [table, created] of [
        ['responses', 'created_at'],
        ['conversations', 'created_at'],
        ['background_runs', '(created_at / 1000)'],
        ['code_containers', '(created_at / 1000)'],
      ]) {
        const first = catalogSql(table, created, () => '?', false, 'created_at');
        const next = catalogSql(table, created, () => '?', true, 'created_at');
        const plan = (sql: string, ...args: unknown[]) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
        for (const detail of [plan(first.pageSql, 10), plan(next.pageSql, 1, 'x', 10)]) {
          expect(detail).toContain(`${table}_catalog`);
          expect(detail).not.toContain('TEMP B-TREE');
        }
      }
    } finally {
      db.close();
      for (const store of stores) await store.close();
    }
  });

  it('keeps data across restarts and applies each migration once', async () => {
    const path = freshPath();
    const first = new SqliteStateStore({ path });
    await first.init();
    await first.createConversation({ id: 'conv_keep', owner: null, createdAt: 1, metadata: {} }, [{ type: 'message', role: 'user', content: 'hi' }]);
    await first.close();

    const second = new SqliteStateStore({ path });
    await second.init();
    await second.init();
    expect(await second.getConversation('conv_keep', null)).toEqual({ id: 'conv_keep', owner: null, createdAt: 1, metadata: {} });
    expect((await second.listConversationItems('conv_keep', null, {}))!.data).toHaveLength(1);
    await second.close();

    const db = new Database(path, { readonly: true });
    try {
      const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
      expect(versions).toEqual(SQLITE_MIGRATIONS.map((m) => m.version));
    } finally {
      db.close();
    }
  });

  it('backfills the output items of responses stored before item lookup existed', async () => {
    const path = freshPath();
    const { mkdirSync } = await import('node:fs');
    const { dirname } = await import('node:path');
    mkdirSync(dirname(path), { recursive: true });
    const old = new Database(path);
    try {
      old.exec(SQLITE_MIGRATIONS[0].sql);
      old.exec('CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
      old.prepare('INSERT INTO schema_migrations VALUES (1, ?, 0)').run(SQLITE_MIGRATIONS[0].name);
      const output = [{ id: 'msg_before', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'old', annotations: [] }] }];
      old.prepare(`INSERT INTO responses VALUES ('resp_before', NULL, 1, NULL, NULL, 'completed', ?, '[]', '[]', 'null', NULL)`).run(JSON.stringify({ id: 'resp_before', output }));
    } finally {
      old.close();
    }
    const store = new SqliteStateStore({ path });
    await store.init();
    try {
      const found = await store.findItems(['msg_before'], null);
      expect(found.get('msg_before')).toMatchObject({ type: 'message', content: [{ text: 'old' }] });
    } finally {
      await store.close();
    }
  });

  it('writes a saved response into no index that nothing reads, and finds an input item by its id through `_by_item`', async () => {
    const path = freshPath();
    const store = new SqliteStateStore({ path });
    await store.init();
    await store.saveResponse({
      id: 'resp_idx',
      owner: 'o',
      createdAt: 1,
      previousResponseId: null,
      conversationId: null,
      status: 'completed',
      response: { id: 'resp_idx', output: [] },
      inputItems: [{ id: 'msg_idx', type: 'message', role: 'user', content: 'hi' }],
      modelItems: [],
      tools: [],
      toolChoice: 'auto',
    });
    expect((await store.findItems(['msg_idx'], 'o')).get('msg_idx')).toMatchObject({ content: 'hi' });
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'response_input_items' ORDER BY name").pluck().all();
      // WITHOUT ROWID: the primary key is the table itself, so the item id's index is the only other B-tree.
      expect(indexes).toEqual(['response_input_items_by_item']);
      const plan = db
        .prepare('EXPLAIN QUERY PLAN SELECT item FROM response_input_items WHERE item_id IN (SELECT value FROM json_each(?))')
        .all('["msg_idx"]')
        .map((row) => (row as { detail: string }).detail)
        .join('; ');
      expect(plan).toMatch(/response_input_items_by_item/);
    } finally {
      db.close();
    }
  });

  it('shares one file between two open stores', async () => {
    const path = freshPath();
    const a = new SqliteStateStore({ path });
    const b = new SqliteStateStore({ path });
    await Promise.all([a.init(), b.init()]);
    try {
      const id = newId('conv');
      await a.createConversation({ id, owner: 'k', createdAt: 1, metadata: {} }, []);
      await Promise.all([
        a.addConversationItems(id, 'k', [{ type: 'message', role: 'user', content: 'from a' }]),
        b.addConversationItems(id, 'k', [{ type: 'message', role: 'user', content: 'from b' }]),
      ]);
      const page = (await b.listConversationItems(id, 'k', { order: 'asc' }))!;
      expect(page.data.map((entry) => entry.position)).toEqual([0, 1]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('refuses to be used before init', async () => {
    await expect(new SqliteStateStore({ path: ':memory:' }).getResponse('resp_x', null)).rejects.toThrow(/before init/);
  });

  it('group-commits saves of one tick: each settles after the commit, and a failing one rolls back alone', async () => {
    const store = new SqliteStateStore({ path: freshPath() });
    await store.init();
    try {
      const record = (id: string, conversationId: string | null = null) => ({
        id,
        owner: 'o',
        createdAt: 1,
        previousResponseId: null,
        conversationId,
        status: 'completed',
        response: { id },
        inputItems: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: id }] }],
        modelItems: [],
        tools: [],
        toolChoice: 'auto',
      });
      const ids = Array.from({ length: 50 }, () => newId('resp'));
      const outcomes = await Promise.allSettled([
        ...ids.map((id) => store.saveResponse(record(id))),
        store.saveResponse(record(newId('resp'), 'conv_missing')),
        store.saveResponse(record(ids[0])),
      ]);
      expect(outcomes.slice(0, 50).every((o) => o.status === 'fulfilled')).toBe(true);
      expect(outcomes[50]).toMatchObject({ status: 'rejected', reason: { code: 'conversation_not_found' } });
      expect(outcomes[51]).toMatchObject({ status: 'rejected', reason: { name: 'DuplicateIdError' } });
      for (const id of ids) expect((await store.getResponse(id, 'o'))?.inputItems).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
