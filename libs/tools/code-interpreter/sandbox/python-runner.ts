/**
 * The CPython backend's program wrapper (the Pyodide worker has its own,
 * in the host scripts): runs the code as `__main__`,
 * prints the value of a trailing expression (as a notebook cell shows it),
 * saves the figures a matplotlib program left open (there is no display),
 * and reports how it ended on file descriptor 3.
 */
export const CPYTHON_RUNNER = String.raw`
import ast, os, sys, traceback
code = sys.stdin.read()
sys.stdin = open(os.devnull)
os.chdir('/mnt/data')
import warnings
# Agg's show() is a no-op that warns; figures are saved after the run instead.
warnings.filterwarnings('ignore', message='.*non-interactive.*')

def _save_figures():
    # Importing matplotlib costs seconds, so only a program that did gets this.
    plt = sys.modules.get('matplotlib.pyplot')
    if plt is None:
        return
    n = 1
    for num in plt.get_fignums():
        while os.path.exists(f'/mnt/data/figure_{n}.png'):
            n += 1
        plt.figure(num).savefig(f'/mnt/data/figure_{n}.png')
    plt.close('all')

ns = {'__name__': '__main__'}
status = 'ok'
try:
    tree = ast.parse(code, '<code>', 'exec')
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, '<code>', 'exec'), ns)
    if last is not None:
        v = eval(compile(last, '<code>', 'eval'), ns)
        if v is not None:
            print(repr(v))
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
