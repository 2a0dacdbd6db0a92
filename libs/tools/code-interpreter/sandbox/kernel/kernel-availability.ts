import { spawnSync } from 'node:child_process';
import type { CodeInterpreterSettings, SandboxBackendName } from '../../config/code-interpreter-settings.js';
import { sandboxArgs } from '../cpython/cpython-sandbox.backend.js';

/** The packages the kernel backend promises the model (its tool description names them). */
export const KERNEL_PACKAGES = ['numpy', 'pandas', 'matplotlib', 'scipy'];

/** What hosts the kernels besides the data stack: ipykernel in the sandbox, Jupyter Server outside it. */
const HOST_PACKAGES = ['ipykernel', 'jupyter_server', 'jupyter_client'];

/** Exits 0 when every package is importable; found without importing them (that takes seconds). */
const PROBE = `import importlib.util, sys\nsys.exit(0 if all(importlib.util.find_spec(p) for p in ${JSON.stringify([...HOST_PACKAGES, ...KERNEL_PACKAGES])}) else 3)`;

/**
 * `auto`: the kernel backend where the host can run it, else Pyodide. The
 * probe is the real sandbox (bubblewrap's namespaces can be refused, as
 * inside another container) with the OS's Python finding ipykernel, Jupyter
 * Server (the same Python runs it outside the sandbox) and the data stack; it
 * runs once at boot, bounded, and costs tens of milliseconds.
 */
export function resolveBackend(settings: CodeInterpreterSettings): SandboxBackendName {
  if (settings.backend !== 'auto') return settings.backend;
  const args = sandboxArgs({
    workspaceBytes: 1 << 20,
    memoryLimitMb: settings.memoryLimitMb,
    cpuSeconds: 10,
    nice: settings.nice,
    program: [settings.cpython.python, '-I', '-c', PROBE],
  });
  const probe = spawnSync(settings.cpython.bwrap, args, { timeout: 10_000, stdio: 'ignore', env: {} });
  return probe.status === 0 ? 'kernel' : 'pyodide';
}
