import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KernelConnection, KernelMessage } from '@jupyterlab/services';
import { DEFAULT_CODE_INTERPRETER_SETTINGS, type CodeInterpreterSettings } from '../../config/code-interpreter-settings.js';
import type { SandboxRunRequest } from '../sandbox-backend.interface.js';
import { KernelSandboxBackend } from './kernel-sandbox.backend.js';
import { matplotlibFontCache } from '../cpython/font-cache.js';

// Imports take seconds with both cores busy; the time-limit test sets its own.
const limits = { timeoutMs: 60_000, graceMs: 1_000, memoryLimitMb: 1024, maxOutputBytes: 4096, maxFileBytes: 4 << 20 };

// nice 0 and the highest CPU weight below the gateway's: the suite's other workers would otherwise starve these kernels (the priority itself is measured in bench/).
function backendWith(kernel: Partial<CodeInterpreterSettings['kernel']>): KernelSandboxBackend {
  return new KernelSandboxBackend({
    ...DEFAULT_CODE_INTERPRETER_SETTINGS,
    backend: 'kernel',
    nice: 0,
    sandbox: { ...DEFAULT_CODE_INTERPRETER_SETTINGS.sandbox, cpuWeight: 99 },
    memoryLimitMb: 1024,
    kernel: { ...DEFAULT_CODE_INTERPRETER_SETTINGS.kernel, ...kernel },
  });
}

describe('KernelSandboxBackend (one long-lived Python per container, bubblewrap)', () => {
  const backend = backendWith({ maxLive: 2, warm: 1 });
  let root: string;
  const run = (session: string, code: string, extra: Partial<SandboxRunRequest> = {}) => {
    mkdirSync(join(root, session), { recursive: true });
    return backend.run({ session, workspaceDir: join(root, session), code, limits, signal: new AbortController().signal, ...extra });
  };

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'switchyard-kernel-'));
  });
  afterAll(async () => {
    await backend.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('keeps variables and imports between calls of one session, and never shows them to another', async () => {
    const first = await run('a', 'import pandas as pd\ndf = pd.DataFrame({"k": ["x", "y", "x"], "v": [1, 2, 3]})\nx = 41\nx + 1');
    expect(first).toMatchObject({ status: 'ok', stdout: '42\n' });
    const second = await run('a', 'print(x, df.groupby("k").v.sum().to_dict())');
    expect(second).toMatchObject({ status: 'ok', stdout: "41 {'x': 4, 'y': 2}\n" });
    const other = await run('b', 'x');
    expect(other.status).toBe('error');
    expect(other.stderr).toContain("NameError: name 'x' is not defined");
  }, 120_000);

  it('hands the kernel files added between calls, and writes back what the code writes and deletes', async () => {
    mkdirSync(join(root, 'f'), { recursive: true });
    writeFileSync(join(root, 'f', 'in.csv'), 'k,v\nx,1\nx,2\ny,5\n');
    const r = await run('f', 'import pandas as pd\nt = pd.read_csv("in.csv").groupby("k").v.sum()\nt.to_csv("out.csv")\nprint(t.to_dict())');
    expect(r).toMatchObject({ status: 'ok', stdout: "{'x': 3, 'y': 5}\n", changedFiles: ['out.csv'] });
    expect(readFileSync(join(root, 'f', 'out.csv'), 'utf8')).toBe('k,v\nx,3\ny,5\n');
    // Uploaded after the kernel started, deleted by the code.
    writeFileSync(join(root, 'f', 'later.txt'), 'later');
    const r2 = await run('f', 'import os\nprint(open("later.txt").read())\nos.remove("in.csv")');
    expect(r2).toMatchObject({ status: 'ok', stdout: 'later\n' });
    expect(existsSync(join(root, 'f', 'in.csv'))).toBe(false);
  }, 120_000);

  it('shows one image per figure: none again for a figure the code saved itself, an open figure kept for the next call', async () => {
    const r = await run('g', 'import matplotlib.pyplot as plt\nfig = plt.figure()\nplt.plot([1, 2, 3])\nplt.savefig("chart.png")\nplt.figure()\nplt.bar([1], [2])');
    expect(r.status).toBe('ok');
    expect(r.changedFiles.sort()).toEqual(['chart.png', 'figure_1.png']);
    // Both figures are still open; nothing changed them, so nothing is shown again.
    const r2 = await run('g', 'print(len(plt.get_fignums()))');
    expect(r2).toMatchObject({ stdout: '2\n', changedFiles: [] });
    // Drawing on the kept figure shows it once more.
    const r3 = await run('g', 'fig.axes[0].plot([3, 2, 1])');
    expect(r3.changedFiles).toEqual(['figure_2.png']);
  }, 120_000);

  it("reads matplotlib's font list built on the host, which the kernel cannot change", async () => {
    const fonts = await matplotlibFontCache(DEFAULT_CODE_INTERPRETER_SETTINGS.cpython.python);
    const r = await run(
      'fonts',
      `import io, logging, os, matplotlib.font_manager as fm
log = io.StringIO()
logger = logging.getLogger("matplotlib.font_manager")
logger.addHandler(logging.StreamHandler(log))
logger.setLevel(logging.DEBUG)
fm._load_fontmanager(try_read_cache=True)
print("read" if "Using fontManager instance from /tmp/${fonts!.name}" in log.getvalue() else "built: " + log.getvalue())
print(os.access("/tmp/${fonts!.name}", os.W_OK))`,
    );
    expect(r).toMatchObject({ status: 'ok', stdout: 'read\nFalse\n' });
  }, 120_000);

  it('says MemoryError for memory exhaustion and resets the session, telling the model which files remain', async () => {
    mkdirSync(join(root, 'm'), { recursive: true });
    writeFileSync(join(root, 'm', 'keep.txt'), 'k');
    await run('m', 'v = 1');
    const r = await run('m', 'b = bytearray(2 * 1024 ** 3)');
    expect(r.status).toBe('memory');
    expect(r.stderr).toContain('MemoryError');
    expect(r.message).toContain('The Python session of this container was reset because of this');
    expect(r.message).toContain('/mnt/data/keep.txt');
    const after = await run('m', 'v');
    expect(after.status).toBe('error');
    expect(after.stderr).toContain("NameError: name 'v' is not defined");
  }, 120_000);

  it("runs a warm call as one execute_request on the kernel's open WebSocket: a sync cell only for changed files, a report cell only after a failed cell", async () => {
    await run('w', 'x = 1');
    const kernel = (backend as any).live.get('w');
    const connection = kernel.connection as KernelConnection;
    const sent: string[] = [];
    const reconnects: string[] = [];
    const onMessage = (_: unknown, { msg, direction }: { msg: KernelMessage.IMessage; direction: string }): void => {
      if (direction === 'send') sent.push(msg.header.msg_type);
    };
    const onStatus = (_: unknown, status: string): void => void reconnects.push(status);
    connection.anyMessage.connect(onMessage);
    connection.connectionStatusChanged.connect(onStatus);
    try {
      expect(await run('w', 'print(x)')).toMatchObject({ status: 'ok', stdout: '1\n' });
      expect(sent).toEqual(['execute_request']);
      // What the cell wrote comes back in its own reply.
      expect(await run('w', 'open("out.txt", "w").write("o")')).toMatchObject({ status: 'ok', changedFiles: ['out.txt'] });
      expect(sent).toEqual(['execute_request', 'execute_request']);
      sent.length = 0;
      // A failed cell's files are reported by a cell of their own; a file added between calls is synced by one before.
      writeFileSync(join(root, 'w', 'in.txt'), 'i');
      const failed = await run('w', 'open("err.txt", "w").write(open("in.txt").read())\n1 / 0');
      expect(failed).toMatchObject({ status: 'error', changedFiles: ['err.txt'] });
      expect(sent).toEqual(['execute_request', 'execute_request', 'execute_request']);
      expect(readFileSync(join(root, 'w', 'err.txt'), 'utf8')).toBe('i');
      // The same kernel and connection throughout.
      expect((backend as any).live.get('w')).toBe(kernel);
      expect(reconnects).toEqual([]);
    } finally {
      connection.anyMessage.disconnect(onMessage);
      connection.connectionStatusChanged.disconnect(onStatus);
    }
  }, 120_000);

  it('interrupts a run at the time limit, keeps its output, and starts the session over', async () => {
    const r = await run('t', 'v = 1\nprint("started", flush=True)\nwhile True: pass', { limits: { ...limits, timeoutMs: 1_500 } });
    expect(r.status).toBe('timeout');
    expect(r.stdout).toBe('started\n');
    expect(r.stderr).toContain('KeyboardInterrupt');
    expect(r.message).toContain('The code was stopped after 1500 ms (the time limit).');
    expect(r.message).toContain('reset because of this');
    const after = await run('t', 'print("v" in globals())');
    expect(after).toMatchObject({ status: 'ok', stdout: 'False\n' });
    expect(after.message).toBeUndefined();
  }, 120_000);
});

describe('KernelSandboxBackend after a crash', () => {
  const backend = backendWith({ maxLive: 2, warm: 0 });
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'switchyard-kernel-crash-'));
    mkdirSync(join(root, 'c'));
  });
  afterAll(async () => {
    await backend.close();
    rmSync(root, { recursive: true, force: true });
  });
  const run = (code: string) => backend.run({ session: 'c', workspaceDir: join(root, 'c'), code, limits, signal: new AbortController().signal });

  it('a kernel killed in a run fails that run saying the session was reset; a kernel that dies between calls is told on the next', async () => {
    await run('v = 1');
    const killed = await run('import os, signal\nos.kill(os.getpid(), signal.SIGKILL)');
    expect(killed.status).toBe('crashed');
    expect(killed.message).toBe(
      'The Python process ended during the run (os._exit, a signal or a crash). The Python session of this container was reset because of this: variables, imports and open figures are gone. No files are in /mnt/data.',
    );
    // A thread that ends the process after the call returned.
    await run('import threading, os\nthreading.Timer(0.2, lambda: os._exit(1)).start()');
    // Gone once the backend saw it exit (a loaded machine delays the thread).
    for (let i = 0; i < 300 && backend.stats().live > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(backend.stats().live).toBe(0);
    const next = await run('print("v" in globals())');
    expect(next).toMatchObject({ status: 'ok', stdout: 'False\n' });
    expect(next.message).toContain('reset (its Python process ended)');
  }, 120_000);
});

describe("KernelSandboxBackend's output", () => {
  it("writes none of @jupyterlab/services' debug lines while a call starts a kernel and talks to it", async () => {
    const root = mkdtempSync(join(tmpdir(), 'switchyard-kernel-quiet-'));
    const backend = backendWith({ maxLive: 1, warm: 0 });
    const written: string[] = [];
    const methods = ['debug', 'log', 'info'] as const;
    const saved = methods.map((m) => console[m]);
    for (const m of methods) console[m] = (...args: unknown[]) => void written.push(args.map(String).join(' '));
    try {
      const r = await backend.run({ session: 'q', workspaceDir: root, code: 'print(1)', limits, signal: new AbortController().signal });
      expect(r).toMatchObject({ status: 'ok', stdout: '1\n' });
      expect((await backend.run({ session: 'q', workspaceDir: root, code: 'print(2)', limits, signal: new AbortController().signal })).stdout).toBe('2\n');
    } finally {
      methods.forEach((m, i) => (console[m] = saved[i]));
      await backend.close();
      rmSync(root, { recursive: true, force: true });
    }
    expect(written.filter((l) => /Starting WebSocket|^Kernel: /.test(l))).toEqual([]);
  }, 120_000);

  it('closes right after a call, while the kernel taking the warm place is being created, without a traceback on stderr', async () => {
    const root = mkdtempSync(join(tmpdir(), 'switchyard-kernel-close-'));
    const backend = backendWith({ maxLive: 2, warm: 1 });
    const written: string[] = [];
    const saved = console.error;
    console.error = (...args: unknown[]) => void written.push(args.map(String).join(' '));
    try {
      await backend.warmUp();
      // The call takes the warm kernel; another starts in its place, and the backend closes while it does.
      const r = await backend.run({ session: 'c', workspaceDir: root, code: 'print(1)', limits, signal: new AbortController().signal });
      expect(r).toMatchObject({ status: 'ok', stdout: '1\n' });
      expect(backend.stats().pooled).toBe(1);
      await backend.close();
    } finally {
      console.error = saved;
      rmSync(root, { recursive: true, force: true });
    }
    expect(written).toEqual([]);
  }, 120_000);
});

describe('KernelSandboxBackend bounds: live kernels and idle expiry', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'switchyard-kernel-lru-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const runOn = (backend: KernelSandboxBackend, session: string, code: string) => {
    mkdirSync(join(root, session), { recursive: true });
    return backend.run({ session, workspaceDir: join(root, session), code, limits, signal: new AbortController().signal });
  };

  it('stops the least recently used kernel past maxLive, and its next call says the session was reset', async () => {
    const backend = backendWith({ maxLive: 1, warm: 0 });
    try {
      await runOn(backend, 'one', 'a = 1');
      writeFileSync(join(root, 'one', 'data.csv'), 'x\n');
      await runOn(backend, 'two', 'b = 2');
      expect(backend.stats().live).toBe(1);
      const back = await runOn(backend, 'one', 'print("a" in globals())');
      expect(back).toMatchObject({ status: 'ok', stdout: 'False\n' });
      expect(back.message).toBe(
        'The Python session of this container was reset (it was the least recently used of the live sessions when the gateway needed room for another): ' +
          'variables, imports and open figures are gone. Files still in /mnt/data: /mnt/data/data.csv.',
      );
      // Told once.
      expect((await runOn(backend, 'one', 'a = 3')).message).toBeUndefined();
    } finally {
      await backend.close();
    }
  }, 120_000);

  it('stops a kernel idle past kernel.idleMs; the next call is told', async () => {
    const backend = backendWith({ maxLive: 2, warm: 0, idleMs: 1_000 });
    try {
      await runOn(backend, 'idle', 'a = 1');
      await new Promise((r) => setTimeout(r, 2_000));
      expect(backend.stats().live).toBe(0);
      const back = await runOn(backend, 'idle', 'print("a" in globals())');
      expect(back).toMatchObject({ status: 'ok', stdout: 'False\n' });
      expect(back.message).toContain('reset (it was idle for more than 1 s)');
    } finally {
      await backend.close();
    }
  }, 120_000);
});
