import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidRequestError, NotFoundError, type PublicItem } from '#tool-sdk/index.js';
import { RequestToolContext } from '#tool-sdk/index.js';
import { validateGatewayConfig } from '#config/config.loader.js';
import { MemoryContainerRecordStore } from '#storage/memory/memory-container-record.store.js';
import { CodeInterpreterToolHandler } from './code-interpreter.tool-handler.js';
import { DEFAULT_CODE_INTERPRETER_SETTINGS } from './config/code-interpreter-settings.js';
import { ContainerStore } from './containers/container-store.service.js';
import { InternalNode } from './homes/internal-node.js';
import { ContainerFileSource } from './files/container-file.source.js';
import { CpythonSandboxBackend } from './sandbox/cpython/cpython-sandbox.backend.js';

describe('CodeInterpreterToolHandler', () => {
  let dir: string;
  let store: ContainerStore;
  let handler: CodeInterpreterToolHandler;
  const ctx = (history: unknown[] = []) => ({
    request: new RequestToolContext('resp_1'),
    history: history as PublicItem[],
    signal: new AbortController().signal,
    requestId: 'resp_1',
  });
  const declare = (container: unknown, path = 'tools[0]') => handler.validate({ type: 'code_interpreter', container } as never, path);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-ci-handler-'));
    const settings = { ...DEFAULT_CODE_INTERPRETER_SETTINGS, dataDir: dir };
    const backend = new CpythonSandboxBackend(settings);
    const records = new MemoryContainerRecordStore();
    store = new ContainerStore(settings, records, new InternalNode(settings.internal, records, false), backend);
    await store.start();
    handler = new CodeInterpreterToolHandler(store, new ContainerFileSource(store), backend, validateGatewayConfig({}));
  });
  afterEach(async () => {
    await store.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('offers one code function bound to the discovered container', async () => {
    const p = declare({ type: 'auto' });
    const { state } = await handler.discover(p, ctx());
    const [tool] = handler.normalize(p, state);
    expect(tool.fn.name).toBe('code_interpreter');
    expect(tool.fn.parameters).toMatchObject({ required: ['code'] });
    expect(tool.hidden).toBeUndefined();
    expect((tool.executionParams as any).containerId).toBe(state.containerId);
  });

  it('reuses the latest live container in the history, and starts a new one when it has expired', async () => {
    const older = await store.create({ owner: null });
    const newer = await store.create({ owner: null });
    const history = [older, newer].map((c, i) => ({ type: 'code_interpreter_call', id: `ci_${i}`, status: 'completed', code: '', container_id: c.id, outputs: null }));
    expect((await handler.discover(declare('auto'), ctx(history))).state.containerId).toBe(newer.id);
    await store.delete(newer.id);
    expect((await handler.discover(declare('auto'), ctx(history))).state.containerId).toBe(older.id);
    await store.delete(older.id);
    const fresh = (await handler.discover(declare('auto'), ctx(history))).state.containerId;
    expect([older.id, newer.id]).not.toContain(fresh);
  });

  it('refuses an unknown container id and an unknown file id, naming the field', async () => {
    const missing = await handler.discover(declare('cntr_0123456789abcdef0123456789abcdef', 'tools[2]'), ctx()).catch((e) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ param: 'tools[2].container', code: 'container_not_found' });
    const badFile = await handler.discover(declare({ type: 'auto', file_ids: ['cfile_none'] }, 'tools[1]'), ctx()).catch((e) => e);
    expect(badFile).toMatchObject({ name: 'NotFoundError', param: 'tools[1].container.file_ids[0]', code: 'file_not_found' });
  });

  it('copies a file id into a container once, however many turns declare it', async () => {
    const source = await store.create({ owner: null });
    const file = await store.addFile(source, 'data.csv', new TextEncoder().encode('a,b\n'));
    const p = declare({ type: 'auto', file_ids: [file.id] });
    const first = (await handler.discover(p, ctx())).state.containerId;
    const history = [{ type: 'code_interpreter_call', id: 'ci_1', status: 'completed', code: '', container_id: first, outputs: null }];
    const c = (await store.get(first))!;
    await store.deleteFile(c, [...c.files.values()][0]);
    expect((await handler.discover(p, ctx(history))).state.containerId).toBe(first);
    // Deleted by the user after the copy: not copied back on the next turn.
    expect(readdirSync(c.dir)).toEqual([]);
  });

  it('turns a history item into the call and output the model saw', () => {
    const items = handler.toModelItems(
      { type: 'code_interpreter_call', id: 'ci_9', status: 'completed', code: 'print(1)', container_id: 'cntr_x', outputs: [{ type: 'logs', logs: '1\n' }] },
      { modelNameFor: () => 'code_interpreter', clientCallName: () => undefined },
    );
    expect(items).toEqual([
      { type: 'function_call', call_id: 'ci_9', name: 'code_interpreter', arguments: '{"code":"print(1)"}' },
      { type: 'function_call_output', call_id: 'ci_9', output: '{"status":"ok","logs":"1\\n"}' },
    ]);
  });

  it('is off beyond loopback without credentials unless allowed, and names the setting in the summary, not to the caller', () => {
    // The auth section is the state library's: set on the validated config, as the gateway's loader leaves it.
    const make = (raw: Record<string, unknown>, auth?: unknown) =>
      new CodeInterpreterToolHandler(store, new ContainerFileSource(store), {} as never, Object.assign(validateGatewayConfig(raw), auth ? { auth } : {}));
    const open = make({ server: { host: '0.0.0.0' } });
    expect(open.describe()).toEqual({ runs: false, detail: expect.stringContaining('ALLOW_UNAUTHENTICATED_CODE=true') });
    let refused: unknown;
    try {
      open.validate({ type: 'code_interpreter', container: { type: 'auto' } }, 'tools[2]');
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect(refused).toMatchObject({ param: 'tools[2].type', code: 'tool_disabled' });
    expect((refused as Error).message).not.toMatch(/0\.0\.0\.0|ALLOW_UNAUTHENTICATED/);
    const cases: Array<[Record<string, unknown>, unknown?]> = [
      [{}],
      [{ server: { host: '0.0.0.0', allowUnauthenticatedCode: true } }],
      [{ server: { host: '0.0.0.0' } }, { apiKeys: ['k-1'] }],
    ];
    for (const [raw, auth] of cases) {
      const on = make(raw, auth);
      expect(on.describe().runs).toBe(true);
      expect(on.validate({ type: 'code_interpreter', container: { type: 'auto' } }, 'tools[0]')).toBeDefined();
    }
  });
});
