import { PYTHON_RUN_CELL, PYTHON_WALK } from './python-walk.js';
/**
 * The CPython backend's program wrapper (the Pyodide worker has its own,
 * in the host scripts), run by `CPYTHON_SUPERVISOR`: runs the code as `__main__`,
 * prints the value of a trailing expression (as a notebook cell shows it),
 * saves the figures a matplotlib program left open (there is no display),
 * and reports how it ended on file descriptor 3.
 */
export const CPYTHON_RUNNER = String.raw`
import signal
# An interrupt before the program starts (a slow start on a busy host) must not end this wrapper
# with a traceback of its own: ignored until then, the supervisor's kill after the grace is the timeout.
signal.signal(signal.SIGINT, signal.SIG_IGN)
import ast, os, sys, traceback
code = sys.stdin.read()
sys.stdin = open(os.devnull)
os.chdir('/mnt/data')
import warnings
# Agg's show() is a no-op that warns; figures are saved after the run instead.
warnings.filterwarnings('ignore', message='.*non-interactive.*')

import importlib.machinery
_saved = set()

class _SavefigRecorder:
    # When the program imports matplotlib.figure, Figure.savefig learns to
    # remember the figures the program saved itself: those are their own image,
    # not rendered again as figure_N.png. Nothing is imported ahead (seconds).
    def find_spec(self, name, path, target=None):
        if name != 'matplotlib.figure':
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module
        def exec_module(module):
            run_module(module)
            original = module.Figure.savefig
            def savefig(fig, *a, **k):
                r = original(fig, *a, **k)
                _saved.add(id(fig))
                return r
            module.Figure.savefig = savefig
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _SavefigRecorder())

def _save_figures():
    # Importing matplotlib costs seconds, so only a program that did gets this.
    plt = sys.modules.get('matplotlib.pyplot')
    if plt is None:
        return
    n = 1
    for num in plt.get_fignums():
        if id(plt.figure(num)) in _saved:
            continue
        while os.path.exists(f'/mnt/data/figure_{n}.png'):
            n += 1
        plt.figure(num).savefig(f'/mnt/data/figure_{n}.png')
    plt.close('all')

ns = {'__name__': '__main__'}
${PYTHON_RUN_CELL}
status = 'ok'
try:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    run_cell(code, ns)
except SyntaxError:
    traceback.print_exc(limit=0)
    status = 'error'
except KeyboardInterrupt:
    status = 'timeout'
except MemoryError:
    sys.stderr.write('MemoryError: the program ran out of memory\n')
    status = 'memory'
except SystemExit as e:
    status = 'ok' if e.code in (None, 0) else 'error'
except BaseException as e:
    traceback.print_exception(type(e), e, e.__traceback__.tb_next)
    status = 'error'
try:
    _save_figures()
except Exception:
    traceback.print_exc()
sys.stdout.flush()
sys.stderr.flush()
os.write(3, status.encode())
`;

/**
 * PID 1's child in the bubblewrap sandbox, around the program's own
 * process. The gateway sends the container's files on file descriptor 5 (the
 * sandbox's unprivileged uid cannot reach the container's directory, and
 * needs no path to it); this writes them into /mnt/data, a tmpfs whose size is the container's byte
 * room (so a program cannot write more than its quota, nor touch the
 * gateway's disk), runs `CPYTHON_RUNNER` as a child, interrupts it at the
 * time limit (SIGINT, then SIGKILL after the grace), and afterwards reports
 * the files that changed on file descriptor 4, then the child's exit code.
 *
 * The files sent and the report are streams of records `kind (1 byte) | name length (u32 BE) |
 * name | data length (u64 BE) | data`, kind `F` a written file, `D` a deleted
 * one, `X` the exit code (as the name; the report only). The program runs in the same sandbox
 * and could forge it, so the gateway treats it as untrusted input: names are
 * checked and sizes bounded there, and only bytes come back, never links.
 * The program's own process never has descriptors 4 and 5.
 */
export const CPYTHON_SUPERVISOR = String.raw`
import os, signal, struct, subprocess, sys, threading
WS = '/mnt/data'
# bubblewrap's --new-session puts the sandbox in its own scheduler autogroup, where the process's nice
# only ranks it against itself: the group takes the same nice, so it yields to the gateway's own group.
try:
    with open('/proc/self/autogroup', 'w') as _ag:
        _ag.write(str(os.nice(0)))
except OSError:
    pass

timeout_s, grace_s = int(sys.argv[1]) / 1000, int(sys.argv[2]) / 1000

${PYTHON_WALK}
files = os.fdopen(5, 'rb')
while True:
    head = files.read(5)
    if len(head) < 5:
        break
    name = os.fsdecode(files.read(struct.unpack('>I', head[1:])[0]))
    left = struct.unpack('>Q', files.read(8))[0]
    dst = os.path.join(WS, name)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, 'wb') as out:
        while left > 0:
            block = files.read(min(left, 1 << 20))
            if not block:
                break
            out.write(block)
            left -= len(block)
files.close()
before = walk(WS)

child = subprocess.Popen([sys.executable, '-I', '-c', sys.argv[3]], stdin=0, pass_fds=(3,))
os.close(0)
os.close(3)
interrupted = threading.Event()
def interrupt():
    if child.poll() is None:
        interrupted.set()
        child.send_signal(signal.SIGINT)
        threading.Timer(grace_s, lambda: child.poll() is None and child.kill()).start()
timer = threading.Timer(timeout_s, interrupt)
timer.start()
rc = child.wait()
timer.cancel()
# Interrupted before the runner could catch it (Python still starting on a busy host): the
# interpreter's own KeyboardInterrupt exit is the time limit, not the program's error.
if interrupted.is_set() and rc > 0:
    rc = -signal.SIGINT

after = walk(WS)
report = os.fdopen(4, 'wb')
def record(kind, name, data=b''):
    n = os.fsencode(name)
    report.write(kind + struct.pack('>I', len(n)) + n + struct.pack('>Q', len(data)) + data)
for rel, stamp in after.items():
    if before.get(rel) == stamp:
        continue
    try:
        with open(os.path.join(WS, rel), 'rb') as f:
            data = f.read()
    except OSError:
        continue
    record(b'F', rel, data)
for rel in before:
    if rel not in after:
        record(b'D', rel)
record(b'X', str(rc))
report.close()
os._exit(0)
`;
