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
`;
