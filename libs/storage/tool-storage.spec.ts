import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseStorageSettings } from './config/storage.config-section.js';
import { toolStorage } from './tool-storage.js';

describe('ToolStorage on the storage settings', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'tool-storage-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('puts a tool table file beside the SQLite state file, or where the operator said', async () => {
    const storage = toolStorage(parseStorageSettings({ driver: 'sqlite', sqlitePath: join(dir, 'state', 'state.sqlite') }));
    expect(storage.shared).toBe(true);
    expect(storage.describeSql({ file: 'files.sqlite' })).toBe(`SQLite ${join(dir, 'state', 'files.sqlite')}`);
    expect(storage.describeSql({ file: 'files.sqlite', path: join(dir, 'x.sqlite') })).toBe(`SQLite ${join(dir, 'x.sqlite')}`);
    const db = storage.openSql({ file: 'files.sqlite' });
    await db.run('CREATE TABLE t (v TEXT)');
    await db.run('INSERT INTO t VALUES (?)', ['kept']);
    expect(await db.all('SELECT v FROM t')).toEqual([{ v: 'kept' }]);
    await db.close();
    const again = storage.openSql({ file: 'files.sqlite' });
    expect(await again.all('SELECT v FROM t')).toEqual([{ v: 'kept' }]);
    await again.close();
  });

  it('is one process in memory with the memory driver, and says so', async () => {
    const storage = toolStorage(parseStorageSettings({ driver: 'memory' }));
    expect(storage.shared).toBe(false);
    expect(storage.describeSql({ file: 'files.sqlite' })).toBe('SQLite :memory:');
    const records = await storage.openContainerRecords();
    await records.init();
    await records.close();
  });

  it('names PostgreSQL without its password', () => {
    const storage = toolStorage(parseStorageSettings({ driver: 'postgres', postgresUrl: 'postgres://app:secret-pw@db:5432/x' }));
    expect(storage.describeSql({ file: 'files.sqlite' })).not.toContain('secret-pw');
    expect(storage.describeSql({ file: 'files.sqlite' })).toContain('PostgreSQL');
  });
});
