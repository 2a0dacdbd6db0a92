import { createServer, type Server } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CODE_INTERPRETER_SETTINGS } from '../../config/code-interpreter-settings.js';
import type { SandboxRunRequest } from '../sandbox-backend.interface.js';
import { buildPureWheel } from '../../testing/build-wheel.js';
import { PyodideSandboxBackend } from './pyodide-sandbox.backend.js';

// Generous: imports are slow with both cores busy. Tests of the limit itself set their own.
const limits = { timeoutMs: 15_000, graceMs: 1_000, memoryLimitMb: 256, maxOutputBytes: 4096, maxFileBytes: 1 << 20 };

/** Drops the in-Python import guard first: the JS side and Node's permission model must hold on their own. */
const UNGUARDED = 'import sys\nsys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "_NoBridge"]\n';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True once the process is gone (killed and reaped); gives a loaded machine ten seconds. */
async function exits(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  return !alive(pid);
}

describe('PyodideSandboxBackend', () => {
  let backend: PyodideSandboxBackend;
  let root: string;
  let listener: Server;
  let port: number;
  let connections = 0;
  const hostSecret = join(tmpdir(), `switchyard-host-secret-${process.pid}.txt`);
  const run = (session: string, code: string, extra: Partial<SandboxRunRequest> = {}) => {
    mkdirSync(join(root, session), { recursive: true });
    return backend.run({ session, workspaceDir: join(root, session), code, limits, signal: new AbortController().signal, ...extra });
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'switchyard-pyodide-'));
    writeFileSync(hostSecret, 'host secret');
    listener = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    port = (listener.address() as { port: number }).port;
    const wheel = buildPureWheel(root, 'shipped_helpers', 'def greet(who):\n    return f"hello {who}"\n');
    backend = new PyodideSandboxBackend({ ...DEFAULT_CODE_INTERPRETER_SETTINGS, maxWorkers: 2, warmWorkers: 1, memoryLimitMb: 256, wheels: [wheel] });
  });
  afterAll(async () => {
    await backend.close();
    listener.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(hostSecret, { force: true });
  });

  it('runs a program, keeps its variables for the same session, and syncs /mnt/data both ways', async () => {
    writeFileSync(join(root, 'a-in.txt'), '');
    mkdirSync(join(root, 'a'), { recursive: true });
    writeFileSync(join(root, 'a', 'input.txt'), 'from the host');
    const first = await run('a', 'x = 21\nprint(open("input.txt").read())\n_ = open("/mnt/data/out.txt", "w").write("from python")');
    expect(first).toMatchObject({ status: 'ok', stdout: 'from the host\n', changedFiles: ['out.txt'] });
    expect(readFileSync(join(root, 'a', 'out.txt'), 'utf8')).toBe('from python');
    expect(await run('a', 'x * 2')).toMatchObject({ status: 'ok', stdout: '42\n' });
    expect(await run('b', '"x" in globals()')).toMatchObject({ status: 'ok', stdout: 'False\n' });
  }, 120_000);

  it('imports a configured pure-Python wheel', async () => {
    expect(await run('a', 'import shipped_helpers\nshipped_helpers.greet("sandbox")')).toMatchObject({ status: 'ok', stdout: "'hello sandbox'\n" });
  }, 60_000);

  it('reports a raised exception as an error with its traceback, and keeps the interpreter', async () => {
    const r = await run('a', 'def f():\n    raise ValueError("bad value")\nf()');
    expect(r.status).toBe('error');
    expect(r.stderr).toContain('ValueError: bad value');
    expect(r.stderr).toContain('line 2, in f');
    expect(await run('a', 'x')).toMatchObject({ status: 'ok', stdout: '21\n' });
  }, 60_000);

  it('cuts output at the cap and says so', async () => {
    const r = await run('a', 'print("y" * 100_000)');
    expect(r.status).toBe('ok');
    expect(r.outputTruncated).toBe(true);
    expect(r.stdout.length).toBe(limits.maxOutputBytes);
  }, 60_000);

  it('stops a run whose caller went away, and starts a fresh interpreter for the next', async () => {
    const abort = new AbortController();
    const pending = run('gone', 'while True:\n    pass', { signal: abort.signal });
    let during: number[] = [];
    setTimeout(() => {
      during = backend.processIds();
      abort.abort();
    }, 1_000);
    expect((await pending).status).toBe('aborted');
    const stopped = during.filter((pid) => !backend.processIds().includes(pid));
    expect(stopped).toHaveLength(1);
    expect(await exits(stopped[0])).toBe(true);
    expect(await run('gone', 'print("fresh")')).toMatchObject({ status: 'ok', stdout: 'fresh\n' });
  }, 60_000);

  it('reports a program that calls os._exit(0) as completed and keeps its files; os._exit(3) is an error', async () => {
    const r = await run('exit', 'import os\nopen("/mnt/data/before-exit.txt", "w").write("kept")\nprint("bye", flush=True)\nos._exit(0)');
    expect(r).toMatchObject({ status: 'ok', stdout: 'bye\n', changedFiles: ['before-exit.txt'] });
    expect(await run('exit', 'print(open("/mnt/data/before-exit.txt").read())')).toMatchObject({ status: 'ok', stdout: 'kept\n' });
    expect(await run('exit', 'import os\nos._exit(3)')).toMatchObject({ status: 'error' });
  }, 60_000);

  it('shows the program no host path in its environment', async () => {
    const r = await run('env', 'import os, sys\nprint(sorted(os.environ), repr(sys.executable), sys.argv)');
    expect(r).toMatchObject({ status: 'ok', stdout: "['HOME', 'LANG', 'LOGNAME', 'PATH', 'PWD', 'USER'] '' ['']\n" });
    const dump = await run('env', 'import os\nprint(open("/proc/self/environ").read() if os.path.exists("/proc/self/environ") else "none")');
    expect(dump.stdout).not.toContain(process.cwd());
  }, 60_000);

  describe('escape attempts fail', () => {
    it('cannot import the JS bridge modules', async () => {
      for (const mod of ['js', 'pyodide_js', 'pyodide.ffi', 'pyodide.code', 'pyodide.http', '_pyodide_core', 'micropip']) {
        const r = await run('esc', `import ${mod}`);
        expect({ mod, status: r.status, err: r.stderr.trim().split('\n').at(-1) }).toEqual({
          mod,
          status: 'error',
          err: `ImportError: module '${mod}' is not available in this sandbox`,
        });
      }
    }, 60_000);

    it('finds no js or pyodide_js module once the import guard is gone', async () => {
      for (const mod of ['js', 'pyodide_js']) {
        const r = await run('esc', `${UNGUARDED}import ${mod}`);
        expect({ mod, status: r.status, err: r.stderr.trim().split('\n').at(-1) }).toEqual({ mod, status: 'error', err: `ModuleNotFoundError: No module named '${mod}'` });
      }
    }, 60_000);

    it('finds nothing to call on the JS side through a JS object the FFI hands over', async () => {
      // No 'js' module: a plain JS object's constructor chain is what is left to climb, and string compilation is off.
      const r = await run(
        'esc',
        `${UNGUARDED}import _pyodide_core
obj = _pyodide_core.to_js({})
out = []
for attempt in ['obj.constructor.constructor("return process")()', 'obj.constructor.constructor("return globalThis")()']:
    try:
        eval(attempt)
        out.append((attempt, 'ran'))
    except Exception as e:
        out.append((attempt, 'EvalError' in str(e)))
print(out)`,
      );
      expect(r.status).toBe('ok');
      expect(r.stdout.trim()).toBe('[(\'obj.constructor.constructor("return process")()\', True), (\'obj.constructor.constructor("return globalThis")()\', True)]');
    }, 60_000);

    it('cannot read host files, directly or by mounting them through the bridge', async () => {
      const direct = await run('esc', `print([__import__("os").path.exists(p) for p in ["${hostSecret}", "/etc/passwd", "${process.cwd()}/package.json"]])`);
      expect(direct).toMatchObject({ status: 'ok', stdout: '[False, False, False]\n' });
      const mounted = await run(
        'esc2',
        `${UNGUARDED}import pyodide_js\npyodide_js.mountNodeFS("/host", "${tmpdir()}")\nprint(open("/host/${hostSecret.split('/').pop()}").read())`,
      );
      // Node's permission model refuses the read; the interpreter is then stopped and replaced.
      expect(mounted.status).not.toBe('ok');
      expect(mounted.stdout).not.toContain('host secret');
    }, 60_000);

    it('writes nothing outside the workspace on the host', async () => {
      const target = join(root, 'outside.txt');
      const r = await run(
        'esc',
        `open("/tmp/x.txt", "w").write("memfs only")
open("/mnt/data/../../escape.txt", "w").write("nope")
import os
print(os.path.exists("/tmp/x.txt"))`,
      );
      expect(r.status).toBe('ok');
      expect(existsSync(target)).toBe(false);
      expect(existsSync(join(root, 'escape.txt'))).toBe(false);
      expect(existsSync('/tmp/x.txt') && readFileSync('/tmp/x.txt', 'utf8') === 'memfs only').toBe(false);
      expect(r.changedFiles).toEqual([]);
      // And a workspace path that climbs out, reported by a sandbox, is not written by the host.
      const hostile = await run('esc', `${UNGUARDED}import pyodide_js\nprint(1)`);
      expect(hostile).toMatchObject({ status: 'error', stdout: '' });
    }, 60_000);

    it('cannot spawn processes', async () => {
      const sub = await run('spawn1', 'import subprocess\nsubprocess.run(["id"])');
      expect(sub.status).not.toBe('ok');
      const system = await run('spawn2', 'import os\nprint(os.system("touch /tmp/switchyard-spawned"))');
      expect(system.stdout).not.toBe('0\n');
      expect(existsSync('/tmp/switchyard-spawned')).toBe(false);
    }, 60_000);

    it('opens no network connection, through sockets, urllib or the bridge', async () => {
      const before = connections;
      const r = await run(
        'net',
        `${UNGUARDED}import socket, urllib.request
results = []
try:
    socket.create_connection(("127.0.0.1", ${port}), timeout=1); results.append('socket connected')
except OSError as e:
    results.append('socket refused')
try:
    urllib.request.urlopen("http://127.0.0.1:${port}/", timeout=1); results.append('urllib connected')
except Exception:
    results.append('urllib refused')
try:
    import js
    results.append('fetch' if getattr(js, 'fetch', None) else 'no fetch')
except ImportError:
    results.append('no js')
print(results)`,
        { limits: { ...limits, timeoutMs: 20_000 } },
      );
      expect(r).toMatchObject({ status: 'ok', stdout: "['socket refused', 'urllib refused', 'no js']\n" });
      expect(connections).toBe(before);
    }, 60_000);

    it('interrupts an infinite loop at the time limit, then serves the next call', async () => {
      const r = await run('loop', 'while True:\n    pass', { limits: { ...limits, timeoutMs: 1_000 } });
      expect(r.status).toBe('timeout');
      expect(r.message).toMatch(/time limit/);
      expect(await run('loop', 'print("next")')).toMatchObject({ status: 'ok', stdout: 'next\n' });
    }, 60_000);

    it('still stops a loop whose program switched the interrupt off through the bridge', async () => {
      const r = await run('nointr', `${UNGUARDED}try:\n    import pyodide_js\n    pyodide_js.setInterruptBuffer(None)\nexcept ImportError:\n    pass\nwhile True:\n    pass`, {
        limits: { ...limits, timeoutMs: 500, graceMs: 500 },
      });
      expect(r.status).toBe('timeout');
      expect(await run('nointr', 'print("back")')).toMatchObject({ status: 'ok', stdout: 'back\n' });
    }, 60_000);

    it('stops a catastrophic regular expression', async () => {
      const r = await run('regex', 'import re\nre.match(r"(a+)+$", "a" * 64 + "b")', { limits: { ...limits, timeoutMs: 1_000 } });
      expect(r.status).toBe('timeout');
      expect(await run('regex', 'print("after regex")')).toMatchObject({ status: 'ok', stdout: 'after regex\n' });
    }, 60_000);

    it('turns a memory bomb into a MemoryError and replaces the interpreter', async () => {
      const pidsBefore = backend.processIds();
      const r = await run('bomb', 'blocks = []\nwhile True:\n    blocks.append(bytearray(10_000_000))');
      expect(r.status).toBe('memory');
      expect(r.message).toMatch(/out of memory \(limit 256 MB\)/);
      const next = await run('bomb', '"blocks" in globals()');
      expect(next).toMatchObject({ status: 'ok', stdout: 'False\n' });
      expect(pidsBefore.every((pid) => pid > 0)).toBe(true);
    }, 60_000);

    it('says MemoryError for a single allocation past the 32-bit address range too (bytearray of 2 GB), not OverflowError', async () => {
      for (const code of ['b = bytearray(2 * 1024 ** 3)', "s = 'x' * 2 ** 31"]) {
        const r = await run('big', code);
        expect(r.status).toBe('memory');
        expect(r.stderr).toContain('MemoryError');
        expect(r.stderr).not.toContain('OverflowError');
        expect(r.message).toMatch(/out of memory \(limit 256 MB\)/);
      }
      // A list grown past the limit, element by element, is the same MemoryError.
      expect(await run('big', 'l = []\nwhile True:\n    l.append([0] * 1000)')).toMatchObject({ status: 'memory', stderr: expect.stringContaining('MemoryError') });
      // An arithmetic overflow is not memory: it stays the program's own OverflowError.
      const math = await run('big', 'import math\nmath.exp(1000)');
      expect(math.status).toBe('error');
      expect(math.stderr).toContain('OverflowError: math range error');
    }, 60_000);

    it('kills the host when the code ignores the interrupt, and the killed process is gone', async () => {
      // One C-level loop (the builtin sum over a range) never checks for the interrupt.
      const pids = new Set(backend.processIds());
      const r = await run('stuck', 'sum(range(10 ** 13))', { limits: { ...limits, timeoutMs: 500, graceMs: 500 } });
      expect(r.status).toBe('timeout');
      for (const pid of pids) if (!backend.processIds().includes(pid)) expect(await exits(pid)).toBe(true);
      expect(await run('stuck', 'print(1)')).toMatchObject({ status: 'ok' });
    }, 60_000);
  });

  // Last: it closes the shared backend (afterAll's close then has nothing left to stop).
  it('close() resolves only once every host process has exited, so none outlives the gateway', async () => {
    const pids = backend.processIds();
    expect(pids.length).toBeGreaterThan(0);
    await backend.close();
    // Signal 0 only asks whether the process exists; an exited and reaped child does not.
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    expect(backend.processIds()).toEqual([]);
  });
});
