import { createServer, type Server } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CODE_INTERPRETER_SETTINGS } from '../../config/code-interpreter-settings.js';
import type { SandboxRunRequest } from '../sandbox-backend.interface.js';
import { CpythonSandboxBackend } from './cpython-sandbox.backend.js';
import { matplotlibFontCache } from './font-cache.js';

// Imports of numpy/pandas/matplotlib take seconds with both cores busy; limit tests set their own.
const limits = { timeoutMs: 60_000, graceMs: 1_000, memoryLimitMb: 1024, maxOutputBytes: 4096, maxFileBytes: 4 << 20 };

describe('CpythonSandboxBackend (bubblewrap, OS packages)', () => {
  const backend = new CpythonSandboxBackend({ ...DEFAULT_CODE_INTERPRETER_SETTINGS, backend: 'cpython', maxWorkers: 2 });
  let root: string;
  let listener: Server;
  let port: number;
  let connections = 0;
  const run = (session: string, code: string, extra: Partial<SandboxRunRequest> = {}) => {
    mkdirSync(join(root, session), { recursive: true });
    return backend.run({ session, workspaceDir: join(root, session), code, limits, signal: new AbortController().signal, ...extra });
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'switchyard-cpython-'));
    listener = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    port = (listener.address() as { port: number }).port;
  });
  afterAll(async () => {
    await backend.close();
    listener.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('returns a figure the program saved and left open once, under its own name', async () => {
    const r = await run('fig', 'import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig("/mnt/data/chart.png")\nplt.figure()\nplt.plot([2, 1])');
    expect(r.status).toBe('ok');
    expect(r.changedFiles.sort()).toEqual(['chart.png', 'figure_1.png']);
  }, 120_000);

  it('runs pandas and matplotlib; a shown figure and a CSV land in the workspace', async () => {
    const r = await run(
      'ds',
      `import pandas as pd, numpy as np
import matplotlib.pyplot as plt
df = pd.DataFrame({"n": np.arange(1, 6)})
df["square"] = df.n ** 2
df.to_csv("squares.csv", index=False)
plt.plot(df.n, df.square)
plt.show()
int(df.square.sum())`,
    );
    // Nothing on stderr: not even matplotlib's notice that it is building its font list, which it no longer does per call.
    expect(r.stderr).toBe('');
    expect(r).toMatchObject({ status: 'ok', stdout: '55\n' });
    expect(r.changedFiles.sort()).toEqual(['figure_1.png', 'squares.csv']);
    expect(readFileSync(join(root, 'ds', 'squares.csv'), 'utf8')).toBe('n,square\n1,1\n2,4\n3,9\n4,16\n5,25\n');
    expect(
      readFileSync(join(root, 'ds', 'figure_1.png'))
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
  }, 120_000);

  it("loads matplotlib's font list built once on the host, read-only, instead of scanning the fonts in every call", async () => {
    const fonts = await matplotlibFontCache(DEFAULT_CODE_INTERPRETER_SETTINGS.cpython.python);
    expect(fonts?.name).toMatch(/^fontlist-v\d+\.json$/);
    // matplotlib logs at debug level whether it used a list it found or built one (which takes seconds).
    const code = `import io, logging, os
log = io.StringIO()
logger = logging.getLogger("matplotlib.font_manager")
logger.addHandler(logging.StreamHandler(log))
logger.setLevel(logging.DEBUG)
import matplotlib.font_manager
print("read" if "Using fontManager instance from /tmp/${fonts!.name}" in log.getvalue() else "built: " + log.getvalue())
print(os.access("/tmp/${fonts!.name}", os.W_OK))`;
    for (const session of ['fonts-1', 'fonts-2']) {
      const r = await run(session, code);
      expect(r).toMatchObject({ status: 'ok', stdout: 'read\nFalse\n', stderr: '' });
    }
    // The same list for every call and every backend of this process.
    expect(await matplotlibFontCache(DEFAULT_CODE_INTERPRETER_SETTINGS.cpython.python)).toBe(fonts);
  }, 120_000);

  it('keeps no interpreter state between calls, only files', async () => {
    await run('state', 'x = 1\nopen("kept.txt", "w").write("yes")');
    const r = await run('state', 'print("x" in globals(), open("kept.txt").read())');
    expect(r).toMatchObject({ status: 'ok', stdout: 'False yes\n' });
  }, 60_000);

  it('reports a program that calls os._exit(0) as completed with the files it wrote; os._exit(3) is an error', async () => {
    const r = await run('exit', 'import os\nopen("before-exit.txt", "w").write("kept")\nprint("bye", flush=True)\nos._exit(0)');
    expect(r).toMatchObject({ status: 'ok', stdout: 'bye\n', changedFiles: ['before-exit.txt'] });
    expect(readFileSync(join(root, 'exit', 'before-exit.txt'), 'utf8')).toBe('kept');
    expect(await run('exit', 'import os\nos._exit(3)')).toMatchObject({ status: 'error' });
  }, 60_000);

  it('cannot write more than the workspace room: past it the program gets ENOSPC and the host disk is untouched', async () => {
    const r = await run('full', 'try:\n    open("big.bin", "wb").write(b"x" * (8 << 20))\nexcept OSError as e:\n    print("refused", e.errno)', {
      limits: { ...limits, maxWorkspaceBytes: 1 << 20 },
    });
    expect(r).toMatchObject({ status: 'ok', stdout: 'refused 28\n' });
  }, 60_000);

  describe('escape attempts fail', () => {
    it('sees no host files and cannot write outside /mnt/data', async () => {
      const secret = join(tmpdir(), `switchyard-cpython-secret-${process.pid}`);
      writeFileSync(secret, 'host secret');
      const r = await run(
        'esc',
        `import os
print([os.path.exists(p) for p in ["${secret}", "/etc/passwd", "${process.cwd()}/package.json", "/root"]])
for target in ["/usr/evil", "/etc/evil", "/evil", "/mnt/data/../evil"]:
    try:
        open(target, "w").write("x")
        print("wrote", target)
    except OSError as e:
        print("refused", target)`,
      );
      rmSync(secret, { force: true });
      expect(r.status).toBe('ok');
      expect(r.stdout.split('\n')[0]).toBe('[False, False, False, False]');
      expect(r.stdout).not.toMatch(/wrote \/(usr|etc)/);
      expect(existsSync('/usr/evil') || existsSync('/etc/evil') || existsSync(join(root, 'evil'))).toBe(false);
    }, 60_000);

    it('spawned processes stay inside the sandbox and die with it', async () => {
      const r = await run(
        'spawn',
        `import subprocess
print(subprocess.run(["/usr/bin/id", "-u"], capture_output=True, text=True).stdout.strip())
subprocess.Popen(["/usr/bin/sleep", "300"])
print(open("/proc/1/cmdline").read().split("\\0")[0])`,
      );
      expect(r.status).toBe('ok');
      // An unprivileged user in its own PID namespace: PID 1 is the sandbox's, not the host's init.
      expect(r.stdout.split('\n')[0]).toBe('1000');
      expect(r.stdout).toContain('bwrap');
    }, 60_000);

    it('opens no network connection', async () => {
      const before = connections;
      const r = await run(
        'net',
        `import socket
try:
    socket.create_connection(("127.0.0.1", ${port}), timeout=2)
    print("connected")
except OSError as e:
    print("refused", e.errno)`,
      );
      expect(r.status).toBe('ok');
      expect(r.stdout).toMatch(/^refused/);
      expect(connections).toBe(before);
    }, 60_000);

    it('reports the time limit when the interrupt ends Python before the runner can catch it', async () => {
      // As when Python is still starting on a busy host: the interrupt's own exit, status 1 or the signal.
      const exits = await run('exits', 'import os, signal\nsignal.signal(signal.SIGINT, lambda *a: os._exit(1))\nwhile True:\n    pass', {
        limits: { ...limits, timeoutMs: 1_000 },
      });
      expect(exits.status).toBe('timeout');
      const dies = await run('dies', 'import signal\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\nwhile True:\n    pass', { limits: { ...limits, timeoutMs: 1_000 } });
      expect(dies.status).toBe('timeout');
    }, 60_000);

    it('stops an infinite loop and a catastrophic regex at the time limit', async () => {
      const loop = await run('loop', 'while True:\n    pass', { limits: { ...limits, timeoutMs: 1_000 } });
      expect(loop.status).toBe('timeout');
      const regex = await run('loop', 'import re\nre.match(r"(a+)+$", "a" * 64 + "b")', { limits: { ...limits, timeoutMs: 1_000 } });
      expect(regex.status).toBe('timeout');
    }, 60_000);

    it('turns a memory bomb into a MemoryError', async () => {
      const r = await run('bomb', 'blocks = []\nwhile True:\n    blocks.append(bytearray(50_000_000))', { limits: { ...limits, memoryLimitMb: 256 } });
      expect(r.status).toBe('memory');
      expect(r.message).toMatch(/out of memory/);
    }, 60_000);
  });
});
