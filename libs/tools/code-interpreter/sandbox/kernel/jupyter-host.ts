import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { CodeInterpreterSettings } from '../../config/code-interpreter-settings.js';
import { fontCacheFiles, sandboxArgs } from '../cpython/cpython-sandbox.backend.js';
import { type FontCacheFile, matplotlibFontCache } from '../cpython/font-cache.js';
import { SandboxBoundary } from '../cgroups/sandbox-boundary.js';
import { CONNECTION_MARK, IPC_MARK, KERNEL_LAUNCHER, KERNEL_NAME, SERVER_KERNEL_MANAGER } from './jupyter-python.js';

export { KERNEL_NAME } from './jupyter-python.js';
/** tmpfs stores a file in whole pages: room for a container's files' last pages on top of its byte budget. */
const PAGE_ROOM = 4096 * 1024;
/** How long a server has to answer its first request (it imports tornado and jupyter_server). */
const START_MS = 60_000;
/** After an unexpected exit, before the next start: a host that cannot run at all does not spin. */
const RESTART_MS = 1_000;

/** A Jupyter Server's address and token, as @jupyterlab/services takes them. */
export interface JupyterEndpoint {
  url: string;
  token: string;
}

/** A free loopback port, for a server that cannot take port 0 and tell which it got. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * The OS's temp directory, or, where it is not writable (the image's
 * read-only root has none), a directory beside the containers' data, which
 * the image keeps short enough for socket paths.
 */
function hostRoot(settings: CodeInterpreterSettings): string {
  try {
    return mkdtempSync(join(tmpdir(), 'syj-'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EROFS' && code !== 'EACCES' && code !== 'ENOENT') throw err;
    const beside = resolve(settings.dataDir, '..', 'kernel-hosts');
    mkdirSync(beside, { recursive: true, mode: 0o700 });
    return mkdtempSync(join(beside, 'syj-'));
  }
}

/**
 * The runtime directory of a kernel host: the kernelspec (whose argv is the
 * launcher that execs bubblewrap around ipykernel, with this gateway's
 * sandbox, nice and limits), the server's kernel manager (ZeroMQ over ipc,
 * a socket directory per kernel), and the socket directories themselves.
 * Under the OS's temp directory, not `dataDir`: a unix socket's path has
 * at most 107 bytes.
 */
export function writeKernelHost(
  settings: CodeInterpreterSettings,
  token: string,
  boundary: SandboxBoundary = SandboxBoundary.for(settings),
  fonts: FontCacheFile | null = null,
): { root: string; env: NodeJS.ProcessEnv } {
  const root = hostRoot(settings);
  const spec = join(root, 'share', 'jupyter', 'kernels', KERNEL_NAME);
  mkdirSync(spec, { recursive: true });
  // bubblewrap, as the sandbox's uid, reaches a kernel's socket directory by its path: search (not list) on the way there.
  chmodSync(root, 0o711);
  mkdirSync(join(root, 'ipc'), { mode: 0o711 });
  mkdirSync(join(root, 'python'));
  mkdirSync(join(root, 'runtime'), { mode: 0o700 });
  const args = sandboxArgs({
    workspaceBytes: settings.maxContainerBytes + PAGE_ROOM,
    memoryLimitMb: settings.memoryLimitMb,
    // CPU seconds over the kernel's whole life: every call it may run at its full time limit.
    cpuSeconds: Math.ceil((settings.maxCallsPerContainer * (settings.timeoutMs + settings.graceMs)) / 1000),
    nice: settings.nice,
    binds: [{ host: IPC_MARK, inside: '/run/jupyter' }],
    // In the sandbox's own /tmp: ipykernel rewrites it once its sockets are bound, and the socket directory is closed to it by then.
    fileFds: [{ fd: CONNECTION_MARK, inside: '/tmp/kernel.json' }],
    // matplotlib's font list, built once on the host: a kernel's first plot does not scan every font.
    readOnlyFiles: fontCacheFiles(fonts),
    env: {
      // IPython's and Jupyter's own directories in the sandbox's /tmp, never in the workspace.
      IPYTHONDIR: '/tmp/.ipython',
      JUPYTER_CONFIG_DIR: '/tmp/.jupyter',
      JUPYTER_DATA_DIR: '/tmp/.jupyter-data',
      JUPYTER_RUNTIME_DIR: '/tmp/.jupyter-runtime',
      PYDEVD_DISABLE_FILE_VALIDATION: '1',
      // ipykernel's threads (IOPub, heartbeat, control, ZeroMQ's) would each reserve a 64 MiB malloc arena of the
      // address-space limit: one arena keeps memoryLimitMb for the program's own data.
      MALLOC_ARENA_MAX: '1',
    },
    program: [
      settings.cpython.python,
      '-Xfrozen_modules=off',
      '-m',
      'ipykernel_launcher',
      '-f',
      '/tmp/kernel.json',
      // Tracebacks as Python prints them, without terminal colours; no history file.
      '--InteractiveShell.colors=NoColor',
      '--InteractiveShell.xmode=Plain',
      '--HistoryManager.enabled=False',
      '--IPKernelApp.matplotlib=None',
    ],
  });
  // Each kernel's cgroup: made by the launcher under these places, named by the kernel's id (see KERNEL_LAUNCHER).
  const cgroups = boundary.cgroups.version === null ? [] : boundary.cgroups.plan('k', boundary.limits).map(({ parent, files }) => ({ parent, files }));
  writeFileSync(join(spec, 'sandbox.json'), JSON.stringify({ bwrap: settings.cpython.bwrap, args, cgroups, runAs: boundary.runAs ?? null }));
  writeFileSync(join(spec, 'launch.py'), KERNEL_LAUNCHER);
  writeFileSync(
    join(spec, 'kernel.json'),
    JSON.stringify({
      argv: [settings.cpython.python, '-I', join(spec, 'launch.py'), '{connection_file}'],
      display_name: 'Python (Switchyard sandbox)',
      language: 'python',
      // Interrupts go over the control channel: a signal to the launcher's process group would not cross bubblewrap's.
      interrupt_mode: 'message',
    }),
  );
  writeFileSync(join(root, 'python', 'switchyard_jupyter.py'), SERVER_KERNEL_MANAGER);
  // The token in a file only the host user reads, never on a command line (ps shows those to every local user).
  mkdirSync(join(root, 'config'), { mode: 0o700 });
  writeFileSync(join(root, 'config', 'jupyter_server_config.json'), JSON.stringify({ ServerApp: { token } }), { mode: 0o600 });
  const env: NodeJS.ProcessEnv = {
    PATH: '/usr/bin:/bin',
    HOME: root,
    PYTHONPATH: join(root, 'python'),
    SWITCHYARD_IPC_ROOT: join(root, 'ipc'),
    JUPYTER_PATH: join(root, 'share', 'jupyter'),
    JUPYTER_CONFIG_DIR: join(root, 'config'),
    JUPYTER_DATA_DIR: join(root, 'data'),
    JUPYTER_RUNTIME_DIR: join(root, 'runtime'),
    IPYTHONDIR: join(root, 'ipython'),
  };
  return { root, env };
}

/** The server's command line: loopback only (the token is in its config file), no browser, no other kernelspecs, ipc kernels, websocket messages as large as a file sync. */
export function serverArgs(settings: CodeInterpreterSettings, port: number, root: string): string[] {
  const maxMessage = settings.maxContainerBytes * 2 + (8 << 20);
  return [
    '-m',
    'jupyter_server',
    '--ServerApp.ip=127.0.0.1',
    `--ServerApp.port=${port}`,
    '--ServerApp.port_retries=0',
    '--ServerApp.open_browser=False',
    '--ServerApp.allow_remote_access=False',
    // The server itself runs no tenant code (that is in each kernel's sandbox, an unprivileged uid in its own user namespace); CI runs as root.
    '--ServerApp.allow_root=True',
    `--ServerApp.root_dir=${root}`,
    `--ServerApp.tornado_settings={"websocket_max_message_size": ${maxMessage}}`,
    '--ServerApp.kernel_manager_class=jupyter_server.services.kernels.kernelmanager.AsyncMappingKernelManager',
    '--MappingKernelManager.kernel_manager_class=switchyard_jupyter.IpcKernelManager',
    // Nagle off on the kernels' WebSockets (see SERVER_KERNEL_MANAGER): without it each kernel message after a cell's first waits ~40 ms.
    '--ServerApp.jpserver_extensions=switchyard_jupyter=True',
    `--KernelSpecManager.allowed_kernelspecs=${KERNEL_NAME}`,
    '--KernelSpecManager.ensure_native_kernel=False',
    // Kernels the gateway no longer holds are shut down by it; a culler would race it.
    '--MappingKernelManager.cull_idle_timeout=0',
  ];
}

/**
 * A Jupyter Server on 127.0.0.1 with a random token, started and supervised
 * by the process that is the home of the containers whose kernels it holds:
 * restarted if it exits (its kernels are then gone, and each container's
 * next call is told), stopped with the process. The kernels are reached
 * through its REST and WebSocket API with @jupyterlab/services.
 */
export class JupyterHost {
  private child: ChildProcess | undefined;
  private current: Promise<JupyterEndpoint> | undefined;
  private closed = false;
  private generation = 0;
  private readonly token = randomBytes(24).toString('hex');
  /**
   * Written when the server first starts, not before: a gateway that never runs a
   * kernel leaves no directory behind, even when it dies without closing.
   */
  private dir: { root: string; env: NodeJS.ProcessEnv } | undefined;
  private readonly exitListeners: Array<() => void> = [];

  constructor(private readonly settings: CodeInterpreterSettings) {}

  /** The running server (started on first use, and again after it exited). */
  endpoint(): Promise<JupyterEndpoint> {
    if (this.closed) return Promise.reject(new Error('the kernel host is closed'));
    this.current ??= this.start();
    return this.current;
  }

  /** Told when the server exits: every kernel it held is gone. */
  onExit(listener: () => void): void {
    this.exitListeners.push(listener);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The host's directory, once the server was first started. */
  get root(): string | undefined {
    return this.dir?.root;
  }

  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((r) => child.once('close', () => r()));
      // SIGTERM: the server shuts its kernels down (each sandbox dies with its launcher anyway: --die-with-parent).
      child.kill('SIGTERM');
      const hard = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(hard);
    }
    if (this.dir) rmSync(this.dir.root, { recursive: true, force: true });
  }

  private async start(): Promise<JupyterEndpoint> {
    // A server that was stopped took its directory with it (switchyard_jupyter's _end_with_the_gateway).
    if (!this.dir || !existsSync(this.dir.root)) this.dir = writeKernelHost(this.settings, this.token, undefined, await matplotlibFontCache(this.settings.cpython.python));
    const dir = this.dir;
    const port = await freePort();
    const generation = ++this.generation;
    const child = spawn(this.settings.cpython.python, serverArgs(this.settings, port, dir.root), {
      stdio: ['ignore', 'ignore', 'pipe'],
      // The server ends itself, and removes the directory, when this process dies without
      // stopping it (switchyard_jupyter's _end_with_the_gateway).
      env: { ...dir.env, SWITCHYARD_PARENT_PID: String(process.pid), SWITCHYARD_HOST_ROOT: dir.root },
      cwd: dir.root,
    });
    this.child = child;
    let log = '';
    let failed: Error | undefined;
    child.on('error', (err) => (failed = err));
    child.stderr!.on('data', (d: Buffer) => {
      log = (log + d.toString()).slice(-4096);
      if (process.env.SWITCHYARD_JUPYTER_DEBUG) process.stderr.write(d);
    });
    child.on('close', () => {
      if (this.generation !== generation) return;
      this.current = undefined;
      for (const l of this.exitListeners) l();
      if (!this.closed) setTimeout(() => void this.endpoint().catch(() => undefined), RESTART_MS).unref();
    });
    const endpoint = { url: `http://127.0.0.1:${port}`, token: this.token };
    const deadline = Date.now() + START_MS;
    for (;;) {
      if (failed) throw new Error(`the Jupyter Server could not start: ${failed.message}`);
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the Jupyter Server exited at start: ${log.trim().split('\n').slice(-3).join(' | ')}`);
      const ok = await fetch(`${endpoint.url}/api/kernelspecs`, { headers: { Authorization: `token ${this.token}` } })
        .then((r) => r.ok)
        .catch(() => false);
      if (ok) return endpoint;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error('the Jupyter Server did not answer within a minute');
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
