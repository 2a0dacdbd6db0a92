/**
 * The Python both sandboxes list a workspace with (the supervisor's write-back, the kernel's file
 * report): regular files only, links never followed, at most 100,000 entries and 32 levels, so a
 * tenant's tree cannot make the listing unbounded. Files as `{relative path: (size, mtime_ns)}`.
 */
export const PYTHON_WALK = String.raw`
def walk(top):
    out, stack, seen = {}, [''], 0
    while stack:
        sub = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(top, sub) if sub else top))
        except OSError:
            continue
        for e in entries:
            seen += 1
            if seen > 100000:
                return out
            rel = sub + '/' + e.name if sub else e.name
            if e.is_dir(follow_symlinks=False):
                if rel.count('/') < 31:
                    stack.append(rel)
            elif e.is_file(follow_symlinks=False):
                st = e.stat(follow_symlinks=False)
                out[rel] = (st.st_size, st.st_mtime_ns)
    return out
`;

/**
 * One program run as a notebook cell, in both Python sandboxes: its statements, then the value of a
 * trailing expression printed as its repr. Exceptions are the caller's to report.
 */
export const PYTHON_RUN_CELL = String.raw`
def run_cell(code, ns):
    tree = ast.parse(code, '<code>', 'exec')
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, '<code>', 'exec'), ns)
    if last is not None:
        v = eval(compile(last, '<code>', 'eval'), ns)
        if v is not None:
            print(repr(v))
`;
