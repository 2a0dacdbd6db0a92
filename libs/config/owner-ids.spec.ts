import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OWNER_SECRET_FILE, OwnerIds, dataDirOwnerSecret, legacyOwnerIdOf } from './owner-ids.js';

describe('owner ids', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sy-owner-ids-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('differ per deployment secret, and are never the plain SHA-256 of the key', () => {
    const a = new OwnerIds({ dataDir: join(dir, 'a') });
    const b = new OwnerIds({ dataDir: join(dir, 'b') });
    const set = new OwnerIds({ dataDir: dir, ownerIdSecret: 'x'.repeat(32) });
    const ids = [a.of('sk-1'), b.of('sk-1'), set.of('sk-1')];
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{64}$/);
      expect(id).not.toBe(legacyOwnerIdOf('sk-1'));
    }
    // One key, one id; another key, another id.
    expect(a.of('sk-1')).toBe(ids[0]);
    expect(a.of('sk-2')).not.toBe(ids[0]);
  });

  it('are the same in every process sharing the data directory, or given the same secret', () => {
    const worker1 = new OwnerIds({ dataDir: dir });
    const worker2 = new OwnerIds({ dataDir: dir });
    expect(worker2.of('sk-1')).toBe(worker1.of('sk-1'));
    const replica1 = new OwnerIds({ dataDir: join(dir, 'r1'), ownerIdSecret: 'y'.repeat(40) });
    const replica2 = new OwnerIds({ dataDir: join(dir, 'r2'), ownerIdSecret: 'y'.repeat(40) });
    expect(replica2.of('sk-1')).toBe(replica1.of('sk-1'));
  });

  it('generate the secret once, into a file only its owner can read, and only when first used', () => {
    const ids = new OwnerIds({ dataDir: dir });
    expect(() => statSync(join(dir, OWNER_SECRET_FILE))).toThrow();
    expect(ids.source).toBe(join(dir, OWNER_SECRET_FILE));
    const first = ids.of('sk-1');
    const file = join(dir, OWNER_SECRET_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
    const secret = dataDirOwnerSecret(dir);
    expect(dataDirOwnerSecret(dir).equals(secret)).toBe(true);
    expect(new OwnerIds({ dataDir: dir }).of('sk-1')).toBe(first);
    // A configured secret is not written anywhere.
    const other = mkdtempSync(join(tmpdir(), 'sy-owner-ids-set-'));
    try {
      new OwnerIds({ dataDir: other, ownerIdSecret: 'z'.repeat(32) }).of('sk-1');
      expect(() => statSync(join(other, OWNER_SECRET_FILE))).toThrow();
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('map each configured key from its old id to its new one', () => {
    const ids = new OwnerIds({ dataDir: dir });
    expect(ids.rekeying(['sk-1', 'sk-2'])).toEqual([
      { from: legacyOwnerIdOf('sk-1'), to: ids.of('sk-1') },
      { from: legacyOwnerIdOf('sk-2'), to: ids.of('sk-2') },
    ]);
  });
});
