import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { newId } from '#tool-sdk/ids.js';
import { SqliteStateStore } from '#storage/sqlite/sqlite-state-store.js';
import type { StoredResponse } from '#storage/state-store.interface.js';
import { killAfterSaves } from './support/process/save-loop.js';

const SAVE_LOOP = fileURLToPath(new URL('./support/process/sqlite-save-loop.child.ts', import.meta.url));

const root = mkdtempSync(join(tmpdir(), 'sy-lockwait-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(root, `state-${++files}.sqlite`);

const record = (id: string): StoredResponse => ({
  id,
  owner: 'o',
  createdAt: 1,
  previousResponseId: null,
  conversationId: null,
  status: 'completed',
  response: { id, output: [] },
  inputItems: [{ type: 'message', role: 'user', content: id }],
  modelItems: [],
  tools: [],
  toolChoice: 'auto',
});

/** Another connection on the file holding the write lock: what a second worker's commit looks like to this one. */
function holdWriteLock(path: string): { db: Database.Database; release(): void } {
  const db = new Database(path);
  db.exec('BEGIN IMMEDIATE');
  return {
    db,
    release: () => {
      if (db.inTransaction) db.exec('COMMIT');
    },
  };
}

const countRows = (path: string, owner: string): number => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM responses WHERE owner = ?').get(owner) as { n: number }).n;
  } finally {
    db.close();
  }
};

describe('SQLite saves while another process holds the write lock', () => {
  it('wait on a timer, not in the busy handler: the event loop keeps running, later saves join the batch, and all commit once the lock is free', async () => {
    const path = freshPath();
    const store = new SqliteStateStore({ path });
    await store.init();
    const lock = holdWriteLock(path);
    try {
      const settled: string[] = [];
      const first = newId('resp');
      const firstSave = store.saveResponse(record(first)).then(() => settled.push(first));
      // Waiting in SQLite's busy handler would freeze this process until the 5 s timeout, then fail the save.
      await new Promise((r) => setTimeout(r, 100));
      expect(settled).toEqual([]);
      const second = newId('resp');
      const secondSave = store.saveResponse(record(second)).then(() => settled.push(second));
      await new Promise((r) => setTimeout(r, 20));
      expect(settled).toEqual([]);
      expect(countRows(path, 'o')).toBe(0);
      lock.release();
      await Promise.all([firstSave, secondSave]);
      expect(settled.sort()).toEqual([first, second].sort());
      expect((await store.getResponse(first, 'o'))?.inputItems).toHaveLength(1);
      expect((await store.getResponse(second, 'o'))?.inputItems).toHaveLength(1);
    } finally {
      lock.release();
      lock.db.close();
      await store.close();
    }
  });

  it('fail with SQLITE_BUSY, storing nothing, when the lock stays taken for the whole busy timeout', async () => {
    const path = freshPath();
    const store = new SqliteStateStore({ path, busyTimeoutMs: 150 });
    await store.init();
    const lock = holdWriteLock(path);
    try {
      const id = newId('resp');
      await expect(store.saveResponse(record(id))).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
      lock.release();
      expect(await store.getResponse(id, 'o')).toBeNull();
      // The next save after the failure is scheduled afresh and commits.
      const next = newId('resp');
      await store.saveResponse(record(next));
      expect(await store.getResponse(next, 'o')).not.toBeNull();
    } finally {
      lock.release();
      lock.db.close();
      await store.close();
    }
  });

  it('lose no save that resolved when the saving process is killed with SIGKILL, its first saves having waited for the lock', async () => {
    const path = freshPath();
    // The schema exists before the child opens the file, so that the lock below is the only wait.
    const setUp = new SqliteStateStore({ path });
    await setUp.init();
    await setUp.close();
    let lock: ReturnType<typeof holdWriteLock> | undefined;
    try {
      const { printed, signal } = await killAfterSaves(SAVE_LOOP, [path], 40, (line, child) => {
        if (line !== 'ready') return;
        lock = holdWriteLock(path);
        child.stdin!.write('go\n');
        setTimeout(() => lock!.release(), 200);
      });
      expect(signal).toBe('SIGKILL');
      const db = new Database(path, { readonly: true });
      try {
        const stored = new Set(db.prepare("SELECT id FROM responses WHERE owner = 'crash'").pluck().all() as string[]);
        expect(printed.filter((id) => !stored.has(id))).toEqual([]);
      } finally {
        db.close();
      }
    } finally {
      lock?.release();
      lock?.db.close();
    }
  }, 30_000);
});
