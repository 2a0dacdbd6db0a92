import { DEFAULT_CODE_INTERPRETER_SETTINGS } from '../../config/code-interpreter-settings.js';
import { resolveBackend } from './kernel-availability.js';

describe('the auto backend', () => {
  it('is the kernel where bubblewrap runs the OS Python with the data stack (this host, as CI installs it)', () => {
    expect(resolveBackend({ ...DEFAULT_CODE_INTERPRETER_SETTINGS })).toBe('kernel');
  });

  it('falls back to Pyodide where the sandbox cannot start or the packages are missing', () => {
    expect(resolveBackend({ ...DEFAULT_CODE_INTERPRETER_SETTINGS, cpython: { python: '/usr/bin/python3', bwrap: '/nonexistent/bwrap' } })).toBe('pyodide');
    expect(resolveBackend({ ...DEFAULT_CODE_INTERPRETER_SETTINGS, cpython: { python: '/usr/bin/false', bwrap: 'bwrap' } })).toBe('pyodide');
  });

  it('leaves an explicit choice alone', () => {
    expect(resolveBackend({ ...DEFAULT_CODE_INTERPRETER_SETTINGS, backend: 'cpython', cpython: { python: '/usr/bin/false', bwrap: '/nonexistent' } })).toBe('cpython');
  });
});
