import { spawnSync } from 'node:child_process';
import type { CodeInterpreterSettings, SandboxBackendName } from '../../config/code-interpreter-settings.js';

/** The packages the kernel backend promises the model (its tool description names them). */
export const KERNEL_PACKAGES = ['numpy', 'pandas', 'matplotlib', 'scipy'];

/**
 * `auto`: the kernel backend where the host can run it (bubblewrap starts
 * and the OS's Python imports the data stack), else Pyodide. Checked once at
 * boot, with a bounded wait: a minute of start-up is not spent on it.
 */
export function resolveBackend(settings: CodeInterpreterSettings): SandboxBackendName {
  if (settings.backend !== 'auto') return settings.backend;
  const bwrap = spawnSync(settings.cpython.bwrap, ['--version'], { timeout: 5_000, stdio: 'ignore' });
  if (bwrap.status !== 0) return 'pyodide';
  const python = spawnSync(settings.cpython.python, ['-I', '-c', `import ${KERNEL_PACKAGES.join(', ')}`], { timeout: 30_000, stdio: 'ignore', env: {} });
  return python.status === 0 ? 'kernel' : 'pyodide';
}
