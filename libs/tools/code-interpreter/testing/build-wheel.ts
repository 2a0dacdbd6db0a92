import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Builds a real pure-Python wheel (a zip with the package and its
 * dist-info, as `pip wheel` lays it out) with the OS's Python, for the
 * suites that check wheels are importable in the sandbox.
 */
export function buildPureWheel(dir: string, name: string, source: string): string {
  const file = join(dir, `${name}-1.0-py3-none-any.whl`);
  const script = `
import sys, zipfile
path, name, source = sys.argv[1:4]
with zipfile.ZipFile(path, 'w') as z:
    z.writestr(f'{name}/__init__.py', source)
    z.writestr(f'{name}-1.0.dist-info/METADATA', f'Metadata-Version: 2.1\\nName: {name}\\nVersion: 1.0\\n')
    z.writestr(f'{name}-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')
    z.writestr(f'{name}-1.0.dist-info/RECORD', '')
`;
  execFileSync('/usr/bin/python3', ['-c', script, file, name, source]);
  return file;
}
