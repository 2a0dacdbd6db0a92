import { SqliteDatabase } from './sql-database.js';

describe('SqliteDatabase', () => {
  let db: SqliteDatabase;

  beforeEach(() => {
    db = new SqliteDatabase(':memory:');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)');
  });

  afterEach(async () => {
    await db.close();
  });

  it('runs a statement again with new parameters, in and out of a transaction', async () => {
    const insert = 'INSERT INTO t (name) VALUES (?)';
    await db.run(insert, ['a']);
    await db.run(insert, ['b']);
    await db.tx(async (tx) => {
      await tx.run(insert, ['c']);
      expect(await tx.all('SELECT name FROM t WHERE name <> ? ORDER BY id', ['a'])).toEqual([{ name: 'b' }, { name: 'c' }]);
    });
    expect(await db.all('SELECT name FROM t WHERE name <> ? ORDER BY id', ['b'])).toEqual([{ name: 'a' }, { name: 'c' }]);
  });

  it('answers a statement it ran before with the schema as it is now', async () => {
    const select = 'SELECT * FROM t ORDER BY id';
    await db.run('INSERT INTO t (name) VALUES (?)', ['a']);
    expect(await db.all(select)).toEqual([{ id: 1, name: 'a' }]);
    db.exec("ALTER TABLE t ADD COLUMN note TEXT NOT NULL DEFAULT 'n'");
    expect(await db.all(select)).toEqual([{ id: 1, name: 'a', note: 'n' }]);
  });

  it('refuses to read rows from a statement that returns none, each time it is asked', async () => {
    await expect(db.all('DELETE FROM t')).rejects.toThrow(/does not return data/);
    await expect(db.all('DELETE FROM t')).rejects.toThrow(/does not return data/);
  });
});
