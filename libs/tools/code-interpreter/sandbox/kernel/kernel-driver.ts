import { PYTHON_RUN_CELL, PYTHON_WALK } from '../python-walk.js';
/**
 * The kernel backend's Python side: one long-lived interpreter in the
 * bubblewrap sandbox, driven over pipes. It preloads the data stack (so a
 * pre-started kernel answers a new container's first call warm), then reads
 * requests on descriptor 0 and answers on descriptor 3, one call at a time.
 *
 * Both directions are records `kind (1 byte) | name length (u32 BE) | name |
 * data length (u64 BE) | data`, as the CPython supervisor's report:
 * - in: `F` a file to put under /mnt/data, `D` one to delete, `C` the code
 *   to run (the name is a JSON object of limits) which starts the run;
 * - out: `R` ready, `O`/`E` the program's stdout/stderr, `F`/`D` files the
 *   run wrote or deleted, `S` how it ended (the name), which ends the call.
 *
 * The program shares this process and could forge any of it, so the gateway
 * treats every record as untrusted input (bounded, names checked) exactly as
 * it treats the supervisor's report. Namespace, imports and open figures stay
 * in this process between calls: that is the point of the backend.
 */
export const KERNEL_DRIVER = String.raw`
import ast, builtins, io, json, os, signal, struct, sys, threading, traceback, warnings
WS = '/mnt/data'
# bubblewrap's --new-session puts the sandbox in its own scheduler autogroup, where the process's nice
# only ranks it against itself: the group takes the same nice, so it yields to the gateway's own group.
try:
    with open('/proc/self/autogroup', 'w') as _ag:
        _ag.write(str(os.nice(0)))
except OSError:
    pass
os.chdir(WS)
sys.stdin = open(os.devnull)
warnings.filterwarnings('ignore', message='.*non-interactive.*')

def read_exact(n):
    buf = bytearray()
    while len(buf) < n:
        b = os.read(0, n - len(buf))
        if not b:
            os._exit(0)
        buf += b
    return bytes(buf)

def receive():
    kind = read_exact(1)
    name = read_exact(struct.unpack('>I', read_exact(4))[0]).decode('utf-8', 'replace')
    data = read_exact(struct.unpack('>Q', read_exact(8))[0])
    return kind, name, data

def send(kind, name, data=b''):
    n = name.encode('utf-8', 'replace')
    view = memoryview(kind + struct.pack('>I', len(n)) + n + struct.pack('>Q', len(data)) + data)
    while view:
        view = view[os.write(3, view):]

saved = set()
try:
    import numpy, pandas, matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot
    from matplotlib.figure import Figure
    _savefig = Figure.savefig
    def _recording_savefig(self, *a, **k):
        # A figure the program saved itself is its own image: not rendered again as figure_N.png.
        r = _savefig(self, *a, **k)
        saved.add(id(self))
        return r
    Figure.savefig = _recording_savefig
    # Once through the paths a first cell takes (pandas' group-by, a figure drawn), so that it runs as fast as any later one.
    pandas.DataFrame({'k': ['a', 'b', 'a'], 'v': [1, 2, 3]}).groupby('k').v.sum().to_dict()
    _fig = matplotlib.pyplot.figure()
    _fig.gca().plot([1, 2])
    _fig.canvas.draw()
    matplotlib.pyplot.close(_fig)
    del _fig
except Exception:
    pass

${PYTHON_WALK}${PYTHON_RUN_CELL}
class Capture(io.TextIOBase):
    def __init__(self, kind, room):
        self.kind, self.room = kind, room
    def writable(self):
        return True
    def write(self, s):
        b = str(s).encode('utf-8', 'replace')
        if self.room[0] > 0:
            part = b[: self.room[0]]
            self.room[0] -= len(part)
            send(self.kind, '', part)
        return len(s)

def show_figures():
    # One image per figure the cell made or changed; figures stay open (they persist), as in a notebook.
    plt = sys.modules.get('matplotlib.pyplot')
    if plt is None:
        return
    n = 1
    for num in plt.get_fignums():
        fig = plt.figure(num)
        if id(fig) in saved or (getattr(fig, '_switchyard_shown', False) and not fig.stale):
            fig._switchyard_shown = True
            fig.stale = False
            continue
        while os.path.exists(f'{WS}/figure_{n}.png'):
            n += 1
        _savefig(fig, f'{WS}/figure_{n}.png')
        fig._switchyard_shown = True
        fig.stale = False

ns = {'__name__': '__main__', '__builtins__': builtins}
main_thread = threading.get_ident()
running = [False]
lock = threading.Lock()

def interrupt():
    with lock:
        if running[0]:
            signal.pthread_kill(main_thread, signal.SIGINT)

def run(code, limits):
    status = 'ok'
    room = [int(limits.get('maxOutputBytes', 65536))]
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Capture(b'O', room), Capture(b'E', room)
    timer = threading.Timer(int(limits.get('timeoutMs', 30000)) / 1000, interrupt)
    saved.clear()
    try:
        with lock:
            running[0] = True
        timer.start()
        run_cell(code, ns)
    except SyntaxError:
        traceback.print_exc(limit=0)
        status = 'error'
    except KeyboardInterrupt as e:
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        status = 'timeout'
    except MemoryError as e:
        sys.stderr.write('MemoryError: the program ran out of memory\n')
        status = 'memory'
    except SystemExit as e:
        status = 'ok' if e.code in (None, 0) else 'error'
    except BaseException as e:
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        status = 'error'
    finally:
        with lock:
            running[0] = False
        timer.cancel()
    try:
        show_figures()
    except KeyboardInterrupt:
        status = 'timeout'
    except Exception:
        traceback.print_exc()
    sys.stdout.flush()
    sys.stderr.flush()
    sys.stdout, sys.stderr = out, err
    return status

def put(rel, data):
    path = os.path.join(WS, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        f.write(data)

send(b'R', 'ready')
while True:
    kind, name, data = receive()
    if kind == b'F':
        try:
            put(name, data)
        except OSError:
            pass
        continue
    if kind == b'D':
        try:
            os.unlink(os.path.join(WS, name))
        except OSError:
            pass
        continue
    if kind != b'C':
        os._exit(2)
    before = walk(WS)
    status = run(data.decode('utf-8', 'replace'), json.loads(name))
    after = walk(WS)
    for rel, stamp in after.items():
        if before.get(rel) == stamp:
            continue
        try:
            with open(os.path.join(WS, rel), 'rb') as f:
                send(b'F', rel, f.read())
        except OSError:
            continue
    for rel in before:
        if rel not in after:
            send(b'D', rel)
    send(b'S', status)
`;
