import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CODE_INTERPRETER_SETTINGS } from '../../config/code-interpreter-settings.js';
import type { SandboxRunRequest } from '../sandbox-backend.interface.js';
import { PyodideSandboxBackend } from './pyodide-sandbox.backend.js';

const limits = { timeoutMs: 3_000, graceMs: 1_000, memoryLimitMb: 256, maxOutputBytes: 4096, maxFileBytes: 1 << 20 };

describe('PyodideSandboxBackend', () => {
  let backend: PyodideSandboxBackend;
  let root: string;
  const run = (session: string, code: string, extra: Partial<SandboxRunRequest> = {}) =>
    backend.run({ session, workspaceDir: join(root, session), code, limits, signal: new AbortController().signal, ...extra });

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'switchyard-pyodide-'));
    backend = new PyodideSandboxBackend({ ...DEFAULT_CODE_INTERPRETER_SETTINGS, maxWorkers: 2, warmWorkers: 1, memoryLimitMb: 256 });
  });
  afterAll(async () => {
    await backend.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('runs a program and keeps its variables for the same session', async () => {
    const first = await run('a', 'x = 21\nprint("hello")');
    expect(first).toMatchObject({ status: 'ok', stdout: 'hello\n' });
    expect(await run('a', 'x * 2')).toMatchObject({ status: 'ok', stdout: '42\n' });
  }, 60_000);
});
