import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backgroundRun, describeBackgroundStoreContract } from '../testing/background-store.contract.js';
import { SqliteBackgroundStore } from './sqlite-background.store.js';
import { SqliteStateStore } from './sqlite-state-store.js';

const root = mkdtempSync(join(tmpdir(), 'sy-sqlite-bg-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const freshPath = (): string => join(root, `db-${++files}`, 'state.sqlite');

describeBackgroundStoreContract('sqlite', () => new SqliteBackgroundStore({ path: freshPath() }));

describe('SqliteBackgroundStore', () => {
  it('lives in the state store file beside its tables, and a second connection sees its runs', async () => {
    const path = freshPath();
    const state = new SqliteStateStore({ path });
    const a = new SqliteBackgroundStore({ path });
    const b = new SqliteBackgroundStore({ path });
    await state.init();
    await a.init();
    await b.init();
    try {
      const run = backgroundRun();
      expect(await a.admit(run, { maxRuns: 1, maxRunsPerOwner: 1 })).toBeNull();
      // The limit is shared through the file.
      expect(await b.admit(backgroundRun(), { maxRuns: 1, maxRunsPerOwner: 1 })).toBe('total');
      expect((await b.get(run.id, 'owner-a'))?.id).toBe(run.id);
    } finally {
      await a.close();
      await b.close();
      await state.close();
    }
  });
});
