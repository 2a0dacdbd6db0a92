// Runs inside the sandbox host's worker thread: loads Pyodide once, then
// runs one program per message against the in-memory /mnt/data.
//
// The Python-to-JS bridge is the way out of the WASM sandbox, so it is closed
// from both ends after start-up: the JS global scope loses everything that
// reaches the host (process, fetch, sockets, workers, module loading) and
// string compilation is disallowed on this process (eval, Function), so a
// Python program that gets hold of a JS object still has nothing to call.
// Python additionally cannot import `js`, `pyodide_js` or the FFI modules.
// Node's permission model on the host process is the last line: no file
// writes, no reads outside the Pyodide distribution, no child processes.
import { constants as fsConstants } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { loadPyodide } from 'pyodide';

// Emscripten's NODEFS reads file-flag constants through process.binding,
// which the permission model refuses; the same numbers are public.
process.binding = (name) => {
  if (name === 'constants') return { fs: fsConstants };
  throw new Error(`process.binding(${name}) is not available`);
};

const port = parentPort;
const { interrupt, indexURL, snapshot, makeSnapshot, wheels } = workerData;
const started = performance.now();

const decoder = new TextDecoder();
let out = null;

function sink(stream) {
  return {
    write(bytes) {
      if (!out) return bytes.length;
      const room = out.max - out.bytes;
      if (room <= 0) {
        out.truncated = true;
        return bytes.length;
      }
      const slice = bytes.length > room ? bytes.subarray(0, room) : bytes;
      if (slice.length < bytes.length) out.truncated = true;
      out.bytes += slice.length;
      out[stream].push(decoder.decode(slice, { stream: true }));
      return bytes.length;
    },
  };
}

// A memory snapshot of a freshly started interpreter (made once by the
// first host, before any program ran) restores for a third or less of the
// CPU time of a cold start (bench/README.md).
const pyodide = await loadPyodide({
  indexURL,
  env: { HOME: '/mnt/data' },
  ...(snapshot ? { _loadSnapshot: snapshot } : {}),
  ...(makeSnapshot ? { _makeSnapshot: true } : {}),
});
if (makeSnapshot) {
  const data = pyodide.makeMemorySnapshot();
  port.postMessage({ type: 'snapshot', data }, [data.buffer]);
}
pyodide.setStdout(sink('stdout'));
pyodide.setStderr(sink('stderr'));
pyodide.setStdin({ error: true });
pyodide.setInterruptBuffer(interrupt);

const RUNNER = String.raw`
import ast, os, sys, traceback

_BLOCKED = ('js', 'pyodide_js', 'pyodide.ffi', 'pyodide.code', 'pyodide.http', 'pyodide.webloop',
            '_pyodide', '_pyodide_core', 'pyodide_http', 'micropip')

def _blocked(name):
    return any(name == b or name.startswith(b + '.') for b in _BLOCKED)

class _NoBridge:
    """Refuses the modules that reach JavaScript (and so the host)."""
    def find_spec(self, name, path=None, target=None):
        if _blocked(name):
            raise ImportError(f"module '{name}' is not available in this sandbox")
        return None

for _m in [m for m in sys.modules if _blocked(m)]:
    del sys.modules[_m]
sys.meta_path.insert(0, _NoBridge())
# Only what a program expects of a Unix environment: Emscripten puts the host
# script's path in '_' and sys.executable, which is none of the program's business.
for _k in list(os.environ):
    if _k not in ('HOME', 'PATH', 'LANG', 'USER', 'LOGNAME', 'PWD'):
        del os.environ[_k]
sys.executable = ''

class _ProgramExit(BaseException):
    pass

def _exit(status):
    # os._exit would end the whole interpreter (Emscripten's exit, which
    # Pyodide turns into a fatal error): end the program instead, as a
    # process that exits ends, with its status.
    raise _ProgramExit(status)

import posix
os._exit = posix._exit = _exit
sys.argv = ['']
sys.orig_argv = ['']
os.makedirs('/mnt/data', exist_ok=True)
os.chdir('/mnt/data')

_ns = {'__name__': '__main__', '__builtins__': __builtins__}

# CPython's words for a size that does not fit Py_ssize_t (32 bits here): bytearray(2 * 1024 ** 3),
# 'x' * 2 ** 31, [0] * 2 ** 31. Other OverflowErrors (math range errors) stay what they are.
_SIZE_OVERFLOW = {"cannot fit 'int' into an index-sized integer", 'Python int too large to convert to C ssize_t'}

def _run(code):
    try:
        tree = ast.parse(code, '<code>', 'exec')
    except SyntaxError:
        traceback.print_exc(limit=0)
        return 'error'
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    try:
        os.chdir('/mnt/data')
    except OSError:
        pass
    try:
        exec(compile(tree, '<code>', 'exec'), _ns)
        if last is not None:
            value = eval(compile(last, '<code>', 'eval'), _ns)
            if value is not None:
                print(repr(value))
        return 'ok'
    except KeyboardInterrupt:
        return 'timeout'
    except MemoryError:
        sys.stderr.write('MemoryError: the program ran out of memory\n')
        return 'memory'
    except OverflowError as e:
        if str(e) not in _SIZE_OVERFLOW:
            traceback.print_exception(type(e), e, e.__traceback__.tb_next)
            return 'error'
        # A size past wasm32's index range (2 GiB): on the other backends' 64-bit Python the same
        # request is a MemoryError against the memory limit, and the program is told the same here.
        sys.stderr.write('MemoryError: the program ran out of memory (it asked for more than this interpreter can address)\n')
        return 'memory'
    except SystemExit as e:
        return 'ok' if e.code in (None, 0) else 'error'
    except _ProgramExit as e:
        return 'ok' if e.args[0] == 0 else 'error'
    except BaseException as e:
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        return 'error'
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
`;
// Pure-Python wheels are zip files: importable in place from the path
// (after the snapshot, so that it stays the same whatever is configured).
pyodide.FS.mkdirTree('/opt/wheels');
for (const w of wheels) pyodide.FS.writeFile(`/opt/wheels/${w.path}`, w.data);
// A JSON list of strings is also a Python list literal.
pyodide.runPython(`import sys\nsys.path[:0] = ${JSON.stringify(wheels.map((w) => `/opt/wheels/${w.path}`))}`);
// The import guard above is not the only wall: the modules that hand Python
// the JS global scope and the Pyodide API are taken out of the registry, so
// a program that edits sys.meta_path finds no 'js' or 'pyodide_js' to import.
pyodide.unregisterJsModule('js');
pyodide.unregisterJsModule('pyodide_js');
pyodide.runPython(RUNNER);
const run = pyodide.globals.get('_run');

// Close the JS end of the bridge: every global that does I/O or reaches
// another thread or process. What stays is computation (the language
// built-ins, WebAssembly, codecs, timers, crypto.getRandomValues for
// os.urandom), which Pyodide itself keeps using.
const HOST_REACHING = [
  'process',
  'fetch',
  'Request',
  'Response',
  'Headers',
  'FormData',
  'WebSocket',
  'EventSource',
  'XMLHttpRequest',
  'navigator',
  'require',
  'module',
  'exports',
  '__filename',
  '__dirname',
  'importScripts',
  'Worker',
  'SharedWorker',
  'BroadcastChannel',
  'MessageChannel',
  'MessagePort',
  'MessageEvent',
  'Deno',
  'Bun',
  'localStorage',
  'sessionStorage',
  'caches',
  'indexedDB',
  'WebTransport',
];
for (const name of HOST_REACHING) {
  try {
    delete globalThis[name];
  } catch {
    // non-configurable: overwritten below
  }
  if (name in globalThis) globalThis[name] = undefined;
}

const FS = pyodide.FS;

function ensureDir(path) {
  const parts = path.split('/').filter(Boolean);
  let cur = '';
  for (const p of parts) {
    cur += '/' + p;
    if (!FS.analyzePath(cur).exists) FS.mkdir(cur);
  }
}

function listFiles(dir, acc = new Map()) {
  for (const name of FS.readdir(dir)) {
    if (name === '.' || name === '..') continue;
    const path = `${dir}/${name}`;
    // lstat: a link the program made is neither followed nor sent back.
    const st = FS.lstat(path);
    if (FS.isDir(st.mode)) listFiles(path, acc);
    else if (FS.isFile(st.mode)) acc.set(path, `${st.size}:${st.mtime instanceof Date ? st.mtime.getTime() : st.mtime}`);
  }
  return acc;
}

function rel(path) {
  return path.slice('/mnt/data/'.length);
}

port.on('message', (msg) => {
  if (msg.type !== 'run') return;
  ensureDir('/mnt/data');
  for (const p of msg.deletes ?? []) {
    try {
      FS.unlink(`/mnt/data/${p}`);
    } catch {
      // already gone
    }
  }
  for (const f of msg.files ?? []) {
    const full = `/mnt/data/${f.path}`;
    ensureDir(full.slice(0, full.lastIndexOf('/')));
    FS.writeFile(full, f.data);
  }
  const before = listFiles('/mnt/data');
  out = { stdout: [], stderr: [], bytes: 0, max: msg.limits.maxOutputBytes, truncated: false };
  let status;
  let exited = false;
  const t0 = performance.now();
  try {
    status = run(msg.code);
  } catch (err) {
    if (err?.name === 'Exit' && typeof err.status === 'number') {
      // os._exit(n): the program ended itself, as a process would; the interpreter is spent.
      exited = true;
      status = err.status === 0 ? 'ok' : 'error';
    } else {
      status = /memory/i.test(String(err?.message)) ? 'memory' : 'crashed';
      out.stderr.push(String(err?.message ?? err));
    }
  }
  const ms = performance.now() - t0;
  const captured = out;
  out = null;
  const after = listFiles('/mnt/data');
  const files = [];
  let fileBytes = 0;
  let filesTruncated = false;
  for (const [path, stamp] of after) {
    if (before.get(path) === stamp) continue;
    const data = FS.readFile(path);
    if (fileBytes + data.length > msg.limits.maxFileBytes) {
      filesTruncated = true;
      continue;
    }
    fileBytes += data.length;
    files.push({ path: rel(path), data });
  }
  const deleted = [...before.keys()].filter((p) => !after.has(p)).map(rel);
  port.postMessage({
    type: 'result',
    id: msg.id,
    status,
    stdout: captured.stdout.join(''),
    stderr: captured.stderr.join(''),
    outputTruncated: captured.truncated,
    filesTruncated,
    files,
    deleted,
    exited,
    ms,
  });
});

port.postMessage({ type: 'ready', bootMs: performance.now() - started });
