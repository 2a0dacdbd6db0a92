/**
 * The program wrapper both backends share: runs the code as `__main__`,
 * prints the value of a trailing expression (as a notebook cell shows it),
 * and reports how it ended on the last line of stderr for the CPython
 * backend (the Pyodide host returns the status directly).
 */
export const CPYTHON_RUNNER = String.raw`
import ast, os, sys, traceback
code = sys.stdin.read()
sys.stdin = open(os.devnull)
os.chdir('/mnt/data')
try:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as _plt
    _shown = [0]
    def _show(*a, **k):
        # No display in the sandbox: each figure shown is saved as a file instead.
        for num in _plt.get_fignums():
            _shown[0] += 1
            _plt.figure(num).savefig(f'/mnt/data/figure_{_shown[0]}.png')
        _plt.close('all')
    _plt.show = _show
except Exception:
    pass
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
sys.stdout.flush()
sys.stderr.flush()
os.write(3, status.encode())
`;
