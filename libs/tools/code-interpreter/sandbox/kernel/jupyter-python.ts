import { PYTHON_WALK } from '../python-walk.js';

/** The kernelspec's name on the host. */
export const KERNEL_NAME = 'switchyard-python';

/** Where the launcher puts the kernel's socket directory in the bubblewrap arguments. */
export const IPC_MARK = '@SWITCHYARD_IPC_DIR@';

/** Where the launcher puts the descriptor of the kernel's connection file in the bubblewrap arguments. */
export const CONNECTION_MARK = '@SWITCHYARD_CONNECTION_FD@';

/** The MIME type of the kernel's file report (a `display_data` the gateway reads, never shown). */
export const FILES_MIME = 'application/vnd.switchyard.files+json';

/**
 * Run once in each new ipykernel, as a silent cell, before it is handed to
 * a container: the data stack is imported and exercised (so a pre-started
 * kernel answers a new container's first call warm), and a private module
 * `_switchyard` holds the gateway's side of the file synchronisation and the
 * figure display. Nothing lands in the program's namespace.
 *
 * The program shares this process and can replace any of it; the gateway
 * reads whatever comes back as untrusted input (bounded, names checked
 * through `ContainerDir`).
 */
export const KERNEL_SETUP = String.raw`
def _switchyard_setup():
    import base64, os, sys, types, warnings
    from IPython import get_ipython
    from IPython.display import display
    WS = '/mnt/data'
    # bubblewrap's --new-session puts the sandbox in its own scheduler autogroup, where the process's nice
    # only ranks it against itself: the group takes the same nice, so it yields to the gateway's own group.
    try:
        with open('/proc/self/autogroup', 'w') as ag:
            ag.write(str(os.nice(0)))
    except OSError:
        pass
    os.chdir(WS)
    warnings.filterwarnings('ignore', message='.*non-interactive.*')
    m = types.ModuleType('_switchyard')
    m.os = os
    saved = set()
    m.saved = saved
    try:
        import numpy, pandas, matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot
        from matplotlib.figure import Figure
        savefig = Figure.savefig
        def recording_savefig(self, *a, **k):
            # A figure the program saved itself is its own image: not shown again.
            r = savefig(self, *a, **k)
            saved.add(id(self))
            return r
        Figure.savefig = recording_savefig
        m.savefig = savefig
        # Once through the paths a first cell takes (pandas' group-by, a figure drawn), so that it runs as fast as any later one.
        pandas.DataFrame({'k': ['a', 'b', 'a'], 'v': [1, 2, 3]}).groupby('k').v.sum().to_dict()
        fig = matplotlib.pyplot.figure()
        fig.gca().plot([1, 2])
        fig.canvas.draw()
        matplotlib.pyplot.close(fig)
    except Exception:
        m.savefig = None
    exec(compile(${JSON.stringify(PYTHON_WALK)}, '<walk>', 'exec'), m.__dict__)
    m.before = {}

    def put(files, deleted, full):
        for rel, data in files.items():
            path = os.path.join(WS, rel)
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, 'wb') as f:
                    f.write(base64.b64decode(data))
            except OSError:
                pass
        for rel in deleted:
            try:
                os.unlink(os.path.join(WS, rel))
            except OSError:
                pass
        if full:
            # A kernel this process did not give its files before: whatever the container lacks goes.
            for rel in m.walk(WS):
                if rel not in files:
                    try:
                        os.unlink(os.path.join(WS, rel))
                    except OSError:
                        pass
        m.before = m.walk(WS)

    def pre_run(info=None):
        saved.clear()
        m.before = m.walk(WS)

    def post_run(result=None):
        # One image per figure the cell made or changed, as display_data PNG; figures stay open, as in a notebook.
        plt = sys.modules.get('matplotlib.pyplot')
        if plt is None or m.savefig is None:
            return
        import io
        for num in plt.get_fignums():
            fig = plt.figure(num)
            if id(fig) in saved or (getattr(fig, '_switchyard_shown', False) and not fig.stale):
                fig._switchyard_shown = True
                fig.stale = False
                continue
            buf = io.BytesIO()
            m.savefig(fig, buf, format='png')
            fig._switchyard_shown = True
            fig.stale = False
            display({'image/png': base64.b64encode(buf.getvalue()).decode('ascii')}, raw=True, metadata={'switchyard': 'figure'})

    class Report(dict):
        # Shown as application/json where IPython formats it (an execute_reply's user_expressions).
        def _repr_json_(self):
            return dict(self)

        # The text/plain IPython adds to every format would be the whole base64 again, pretty-printed.
        def _repr_pretty_(self, p, cycle):
            p.text('<switchyard file report>')

    def report_value():
        return Report(changes())

    def report():
        display({${JSON.stringify(FILES_MIME)}: changes()}, raw=True)

    def changes():
        after = m.walk(WS)
        files = {}
        for rel, stamp in after.items():
            if m.before.get(rel) == stamp:
                continue
            try:
                with open(os.path.join(WS, rel), 'rb') as f:
                    files[rel] = base64.b64encode(f.read()).decode('ascii')
            except OSError:
                continue
        deleted = [rel for rel in m.before if rel not in after]
        m.before = after
        return {'files': files, 'deleted': deleted}

    m.put, m.pre_run, m.post_run, m.report, m.report_value = put, pre_run, post_run, report, report_value
    sys.modules['_switchyard'] = m
    ip = get_ipython()
    ip.events.register('pre_run_cell', pre_run)
    ip.events.register('post_run_cell', post_run)

_switchyard_setup()
del _switchyard_setup
`;

/**
 * The Jupyter Server's side of the gateway (the module `switchyard_jupyter`,
 * loaded from the runtime directory): its kernel manager, with ZeroMQ over
 * `ipc` sockets, each kernel in a directory of its own (bound into that
 * kernel's sandbox, and only into that one, so no tenant reaches another's
 * sockets), removed when the kernel is; and a server extension that turns
 * Nagle's algorithm off on the kernels' WebSockets.
 *
 * Why the extension: Tornado leaves Nagle on for a WebSocket unless its
 * handler asks otherwise, and Jupyter Server's kernel handler does not. A
 * cell's messages (status busy, the reply, status idle) are small writes in a
 * row, so each one after the first waited in the server's socket for the ACK
 * of the one before, which the gateway's side delays by Linux's 40 ms minimum
 * (it has nothing to send back): about 40 ms per execute_request, 148 ms for
 * a call's three, against a few ms of work.
 */
export const SERVER_KERNEL_MANAGER = String.raw`
import json, os, shutil, signal, time, uuid
from jupyter_client.ioloop import AsyncIOLoopKernelManager


def _end_with_the_gateway():
    # A gateway that dies without stopping this server (SIGKILL, the OOM killer, a crashed worker)
    # left it running with its kernels, a port and a temporary directory, on every restart again.
    # Linux sends SIGTERM to a process whose parent dies once PR_SET_PDEATHSIG (1) is set; a parent
    # already gone before this ran is seen by the pid it gave. An operator's own server
    # (kernel.jupyterUrl) that loads this extension is not the gateway's child: left alone.
    parent = int(os.environ.get('SWITCHYARD_PARENT_PID', '0'))
    if not parent:
        return
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)
    except Exception:
        return
    # The host's directory (the kernelspec, the kernels' socket directories) goes with the server,
    # removed on the SIGTERM that stops it: when the gateway died, nothing else would. Not in an
    # exit hook: the parent-death signal comes once per thread of the gateway that ends, and a
    # later one may end this process before such a hook ran; nor only when this process is
    # orphaned: it is handed to the gateway's other threads before init, and getppid() still
    # names the gateway until the last one has gone. A gateway that stops this server (SIGTERM
    # too) removes the directory itself afterwards, and writes a new one to start another.
    root = os.environ.get('SWITCHYARD_HOST_ROOT')
    if root:
        stop = signal.getsignal(signal.SIGTERM)

        def _remove_then_stop(sig, frame):
            shutil.rmtree(root, ignore_errors=True)
            if callable(stop):
                stop(sig, frame)
            else:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGTERM)

        signal.signal(signal.SIGTERM, _remove_then_stop)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def _jupyter_server_extension_points():
    return [{'module': 'switchyard_jupyter'}]


def _kernel_socket_handlers():
    # Jupyter Server 1.x and 2.x name the kernel's WebSocket handler differently.
    found = []
    try:
        from jupyter_server.services.kernels.handlers import ZMQChannelsHandler
        found.append(ZMQChannelsHandler)
    except ImportError:
        pass
    try:
        from jupyter_server.services.kernels.websocket import KernelWebsocketHandler
        found.append(KernelWebsocketHandler)
    except ImportError:
        pass
    return found


def _load_jupyter_server_extension(serverapp):
    _end_with_the_gateway()
    for handler in _kernel_socket_handlers():
        if getattr(handler, '_switchyard_nodelay', False):
            continue
        opened = handler.open

        def open(self, *args, _opened=opened, **kwargs):
            self.set_nodelay(True)
            return _opened(self, *args, **kwargs)

        handler.open = open
        handler._switchyard_nodelay = True
    serverapp.log.info('switchyard: TCP_NODELAY on kernel WebSockets')

IPC_ROOT = os.environ['SWITCHYARD_IPC_ROOT']
KERNEL_NAME = ${JSON.stringify(KERNEL_NAME)}

class IpcKernelManager(AsyncIOLoopKernelManager):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._ipc_dir = os.path.join(IPC_ROOT, uuid.uuid4().hex[:16])
        os.makedirs(self._ipc_dir, mode=0o700)
        self.transport = 'ipc'
        self.ip = os.path.join(self._ipc_dir, 'k')

    async def _async_cleanup_resources(self, restart=False):
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self._ipc_dir, ignore_errors=True)
        # The launcher removes the kernel's cgroup when the kernel ends; a launcher killed outright could not.
        if getattr(self, 'kernel_id', None):
            _remove_cgroup(self.kernel_id)


def _remove_cgroup(kernel_id):
    try:
        with open(os.path.join(os.environ['JUPYTER_PATH'], 'kernels', KERNEL_NAME, 'sandbox.json')) as f:
            places = json.load(f).get('cgroups', [])
    except (OSError, ValueError, KeyError):
        return
    for place in places:
        d = os.path.join(place['parent'], 'sy-k-' + os.path.basename(kernel_id))
        for _ in range(100):
            try:
                with open(os.path.join(d, 'cgroup.procs')) as f:
                    for p in f.read().split():
                        try:
                            os.kill(int(p), signal.SIGKILL)
                        except OSError:
                            pass
                os.rmdir(d)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)
`;

/**
 * The kernelspec's argv[0..1], run as the gateway's user: reads the
 * connection file Jupyter wrote and hands the kernel its own copy (the
 * socket paths as the sandbox sees them) through a pipe into its /tmp;
 * makes the kernel's cgroup (`sy-k-<kernel id>` under each place the gateway
 * found, with its limits, from sandbox.json beside it) and starts
 * bubblewrap around ipykernel in it, as the sandbox's uid, with an empty
 * environment (the server's holds nothing for it). It then stays, outside
 * the sandbox: once the kernel has bound its sockets (before any program
 * runs) the socket directory becomes the host user's alone again, so the
 * sandbox has no writable host directory; when the kernel ends it empties
 * and removes the cgroup. A launcher killed with SIGKILL takes bubblewrap
 * with it (--die-with-parent); the server's kernel manager and the gateway
 * remove the cgroup then.
 */
export const KERNEL_LAUNCHER = String.raw`
import json, os, re, shutil, signal, sys, time
IPC_MARK = ${JSON.stringify(IPC_MARK)}
CONNECTION_MARK = ${JSON.stringify(CONNECTION_MARK)}
here = os.path.dirname(os.path.abspath(__file__))
with open(sys.argv[1]) as f:
    info = json.load(f)
if info.get('transport') != 'ipc':
    sys.exit('switchyard kernels speak ZeroMQ over ipc only')
kernel_id = re.fullmatch(r'kernel-([0-9a-f-]{1,64})\.json', os.path.basename(sys.argv[1]))
if not kernel_id:
    sys.exit('switchyard kernels need the connection file Jupyter names by kernel id')
kernel_id = kernel_id.group(1)
with open(os.path.join(here, 'sandbox.json')) as f:
    sandbox = json.load(f)
run_as = sandbox.get('runAs')
ipc_dir = os.path.dirname(info['ip'])
# The kernel's copy of the connection file, with the socket paths as the sandbox sees them, goes in through a pipe.
conn_r, conn_w = os.pipe()
os.write(conn_w, json.dumps(dict(info, ip='/run/jupyter/k')).encode())
os.close(conn_w)
os.set_inheritable(conn_r, True)
if run_as:
    # The kernel binds its sockets here: until it has, the directory is its uid's.
    os.chown(ipc_dir, run_as['uid'], run_as['gid'])
marks = {IPC_MARK: ipc_dir, CONNECTION_MARK: str(conn_r)}
args = [sandbox['bwrap']] + [marks.get(a, a) for a in sandbox['args']]
# Found now: bubblewrap starts with an empty environment, PATH included.
exe = shutil.which(args[0]) or args[0]

cgroups = []
for place in sandbox.get('cgroups', []):
    d = os.path.join(place['parent'], 'sy-k-' + kernel_id)
    os.makedirs(d, exist_ok=True)
    for lim in place['files']:
        path = os.path.join(d, lim['file'])
        if 'memsw' in lim['file'] and not os.path.exists(path):
            continue
        with open(path, 'w') as f:
            f.write(lim['value'])
    cgroups.append(d)

child = os.fork()
if child == 0:
    try:
        for d in cgroups:
            with open(os.path.join(d, 'cgroup.procs'), 'w') as f:
                f.write(str(os.getpid()))
        if run_as:
            os.setgroups([])
            os.setgid(run_as['gid'])
            os.setuid(run_as['uid'])
        os.execve(exe, args, {})
    except BaseException as e:
        sys.stderr.write('switchyard launcher: the sandbox did not start: %r\n' % (e,))
    os._exit(125)
os.close(conn_r)

def stop(sig, frame):
    try:
        os.kill(child, signal.SIGKILL)
    except OSError:
        pass
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)

status = None
if run_as:
    sockets = [os.path.join(ipc_dir, 'k-%d' % info[p]) for p in ('shell_port', 'iopub_port', 'stdin_port', 'control_port', 'hb_port')]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not all(os.path.exists(s) for s in sockets):
        pid, st = os.waitpid(child, os.WNOHANG)
        if pid:
            status = st
            break
        time.sleep(0.02)
    os.chown(ipc_dir, os.getuid(), os.getgid())
    os.chmod(ipc_dir, 0o700)

while status is None:
    try:
        status = os.waitpid(child, 0)[1]
    except ChildProcessError:
        status = 0

def empty(d):
    for _ in range(50):
        try:
            with open(os.path.join(d, 'cgroup.procs')) as f:
                pids = [int(p) for p in f.read().split()]
        except OSError:
            return
        if not pids:
            return
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)
for d in cgroups:
    empty(d)
    for _ in range(100):
        try:
            os.rmdir(d)
            break
        except FileNotFoundError:
            break
        except OSError:
            time.sleep(0.02)
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
`;
