import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CODE_INTERPRETER_SETTINGS } from '../config/code-interpreter-settings.js';
import { MemoryContainerRecordStore } from '#storage/memory/memory-container-record.store.js';
import { InternalNode } from '../homes/internal-node.js';
import { CpythonSandboxBackend } from '../sandbox/cpython/cpython-sandbox.backend.js';
import { ContainerFullError, ContainerStore } from './container-store.service.js';
import { until } from '../../../../test/support/until.js';

describe('ContainerStore', () => {
  let dir: string;
  let store: ContainerStore;
  let records: MemoryContainerRecordStore;
  const expired: string[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-containers-'));
    const settings = { ...DEFAULT_CODE_INTERPRETER_SETTINGS, dataDir: dir, maxContainerBytes: 1_000, idleExpiryMs: 600_000 };
    records = new MemoryContainerRecordStore();
    store = new ContainerStore(settings, records, new InternalNode(settings.internal, records, false), new CpythonSandboxBackend(settings));
    store.onExpire((id) => void expired.push(id));
    await store.start();
  });
  afterEach(async () => {
    await store.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives each container its own directory and an unguessable id', async () => {
    const a = await store.create({ owner: null });
    const b = await store.create({ owner: 'key-b' });
    expect(a.id).toMatch(/^cntr_[0-9a-f]{32}$/);
    expect(a.dir).not.toBe(b.dir);
    expect((await store.list(null)).map((c) => c.id)).toEqual([a.id]);
    expect((await store.list('key-b')).map((c) => c.id)).toEqual([b.id]);
    expect(await store.get('cntr_../../etc')).toBeUndefined();
  });

  it('finds a container and its files for their owner only', async () => {
    const mine = await store.create({ owner: 'key-a' });
    const open = await store.create({ owner: null });
    const f = await store.addFile(mine, 'notes.txt', new TextEncoder().encode('hi'));
    expect((await store.owned(mine.id, 'key-a'))?.id).toBe(mine.id);
    expect(await store.owned(mine.id, 'key-b')).toBeUndefined();
    expect(await store.owned(mine.id, null)).toBeUndefined();
    expect(await store.owned(open.id, 'key-a')).toBeUndefined();
    expect((await store.findFile(f.id, 'key-a'))?.file.id).toBe(f.id);
    expect(await store.findFile(f.id, 'key-b')).toBeUndefined();
  });

  it('keeps a copied file under its base name only, inside the workspace', async () => {
    const c = await store.create({ owner: null });
    const f = await store.addFile(c, '../../outside/notes.txt', new TextEncoder().encode('hi'));
    expect(f.path).toBe('notes.txt');
    expect(readFileSync(join(c.dir, 'notes.txt'), 'utf8')).toBe('hi');
    expect(existsSync(join(dir, 'outside'))).toBe(false);
  });

  it("records what a run wrote, keeps a path's file id, and refuses files past the byte budget", async () => {
    const c = await store.create({ owner: null });
    writeFileSync(join(c.dir, 'a.csv'), 'x'.repeat(400));
    const first = await store.recordChanges(c, ['a.csv']);
    writeFileSync(join(c.dir, 'a.csv'), 'x'.repeat(500));
    const second = await store.recordChanges(c, ['a.csv']);
    expect(second.files[0].id).toBe(first.files[0].id);
    expect(second.files[0].bytes).toBe(500);
    writeFileSync(join(c.dir, 'big.bin'), 'y'.repeat(600));
    const third = await store.recordChanges(c, ['big.bin', '../escape']);
    expect(third.refused).toEqual(['big.bin']);
    expect(existsSync(join(c.dir, 'big.bin'))).toBe(false);
    await store.addFile(c, 'one.txt', new Uint8Array(500));
    await expect(store.addFile(c, 'more.txt', new Uint8Array(600))).rejects.toThrow(ContainerFullError);
  });

  it('expires an idle container with its files and tells the listeners', async () => {
    const c = await store.create({ owner: null, idleExpiryMs: 1_000 });
    writeFileSync(join(c.dir, 'f.txt'), 'x');
    let dirWhenTold: boolean | undefined;
    store.onExpire((id) => {
      if (id === c.id) dirWhenTold = existsSync(c.dir);
    });
    await records.update(c.id, c.home, { lastActiveAt: Date.now() - 2_000 });
    expect(await store.get(c.id)).toBeUndefined();
    // `get` answers at once and leaves the removal (files, then listeners) to run on its own: wait for it.
    await until(() => expired.includes(c.id), Boolean, 'the expiry listeners to be told');
    expect(existsSync(c.dir)).toBe(false);
    expect(dirWhenTold).toBe(false);
  }, 40_000);
});
