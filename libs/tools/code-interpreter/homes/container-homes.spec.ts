import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseStorageSettings } from '#storage/config/storage.config-section.js';
import { createContainerRecordStore } from '#storage/storage.module.js';
import { NotFoundError } from '#tool-sdk/index.js';
import { DEFAULT_CODE_INTERPRETER_SETTINGS, type CodeInterpreterSettings } from '../config/code-interpreter-settings.js';
import { ContainerGoneError, ContainerStore } from '../containers/container-store.service.js';
import { CpythonSandboxBackend } from '../sandbox/cpython/cpython-sandbox.backend.js';
import { InternalNode } from './internal-node.js';

const SECRET = 'a-shared-secret-for-tests';
const bytes = (s: string) => new TextEncoder().encode(s);

/**
 * Two gateway processes' container stores on one SQLite file, each with a
 * data directory of its own (as replicas on two hosts have): whatever one
 * can answer about the other's containers, it got by forwarding.
 */
describe('container homes', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-homes-'));
  const started: ContainerStore[] = [];

  async function process(name: string, internal: Partial<CodeInterpreterSettings['internal']> = {}): Promise<ContainerStore> {
    const settings: CodeInterpreterSettings = {
      ...DEFAULT_CODE_INTERPRETER_SETTINGS,
      dataDir: join(root, name),
      internal: { ...DEFAULT_CODE_INTERPRETER_SETTINGS.internal, secret: SECRET, leaseMs: 600, ...internal },
    };
    const records = await createContainerRecordStore(parseStorageSettings({ driver: 'sqlite', sqlitePath: join(root, 'state.sqlite') }));
    const store = new ContainerStore(settings, records, new InternalNode(settings.internal, records, true), new CpythonSandboxBackend(settings));
    await store.start();
    started.push(store);
    return store;
  }

  afterAll(async () => {
    for (const s of started) await s.stop().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  it("forwards file operations to the container's home, whichever process is asked", async () => {
    const a = await process('a');
    const b = await process('b');
    const mine = await a.create({ owner: 'key-a' });
    await a.addFile(mine, 'notes.txt', bytes('hi'));
    const seen = (await b.owned(mine.id, 'key-a'))!;
    expect(seen.home).toBe(mine.home);
    expect(await b.owned(mine.id, 'key-b')).toBeUndefined();
    expect((await b.content(seen, seen.files.get('notes.txt')!)).toString()).toBe('hi');
    // Written by b, kept by a: in a's directory, nothing in b's.
    const up = await b.addFile(seen, 'more.txt', bytes('there'));
    expect(readFileSync(join(root, 'a', mine.id, 'more.txt'), 'utf8')).toBe('there');
    expect(existsSync(join(root, 'b', mine.id, 'more.txt'))).toBe(false);
    expect([...(await a.get(mine.id))!.files.keys()].sort()).toEqual(['more.txt', 'notes.txt']);
    await b.deleteFile(seen, up);
    expect(existsSync(join(root, 'a', mine.id, 'more.txt'))).toBe(false);
    // A file the home no longer has is a 404 on the asking side too.
    await expect(b.content(seen, up)).rejects.toBeInstanceOf(NotFoundError);
    await expect(b.content(seen, up)).rejects.toMatchObject({ code: 'file_not_found' });
    expect(await b.delete(mine.id)).toBe(true);
    expect(existsSync(join(root, 'a', mine.id))).toBe(false);
    expect(await a.get(mine.id)).toBeUndefined();
  });

  it('refuses a forwarded operation without the shared credential, naming the setting', async () => {
    const a = await process('c');
    const stranger = await process('d', { secret: 'some-other-secret-value' });
    const box = await a.create({ owner: null });
    const f = await a.addFile(box, 'x.txt', bytes('x'));
    await expect(stranger.content((await stranger.get(box.id))!, f)).rejects.toThrow(/codeInterpreter\.internal\.secret/);
    // A 503 the client may retry once the deployment is fixed, not an unexpected 500.
    await expect(stranger.content((await stranger.get(box.id))!, f)).rejects.toMatchObject({ name: 'UnavailableError', code: 'internal_credential_refused' });
  });

  it('takes over a container whose home stopped, keeping what it can reach and recording the reset', async () => {
    const a = await process('e');
    const b = await process('f');
    const box = await a.create({ owner: null });
    const f = await a.addFile(box, 'data.csv', bytes('1,2'));
    await a.stop();
    const seen = (await b.get(box.id))!;
    // b's data directory is not a's: the file is out of reach, and said to be lost.
    await expect(b.content(seen, f)).rejects.toBeInstanceOf(ContainerGoneError);
    const now = (await b.get(box.id))!;
    expect(now.home).not.toBe(box.home);
    expect(now.files.size).toBe(0);
    await b.addFile(now, 'new.txt', bytes('n'));
    expect(readFileSync(join(root, 'f', box.id, 'new.txt'), 'utf8')).toBe('n');
  });
});
