import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CodeInterpreterSettings } from '../../config/code-interpreter-settings.js';
import { CPYTHON_RUNNER } from '../python-runner.js';
import type { SandboxBackend, SandboxRunRequest, SandboxRunResult, SandboxStatus } from '../sandbox-backend.interface.js';
import { removeWorkspaceFile, workspaceStamps } from '../workspace-files.js';

/**
 * bubblewrap arguments for one call: every namespace unshared (no network,
 * own PIDs, an unprivileged user), the OS's /usr read-only, of /etc only
 * what the dynamic loader needs, none of the gateway's files, a private /tmp, and the container's workspace as
 * the only writable place, at /mnt/data.
 */
export function bwrapArgs(settings: CodeInterpreterSettings, workspaceDir: string, limits: SandboxRunRequest['limits']): string[] {
  const cpuSeconds = Math.max(1, Math.ceil((limits.timeoutMs + limits.graceMs) / 1000));
  return [
    '--unshare-all',
    '--unshare-user',
    '--uid',
    '1000',
    '--gid',
    '1000',
    '--die-with-parent',
    '--new-session',
    '--ro-bind',
    '/usr',
    '/usr',
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    '--symlink',
    'usr/bin',
    '/bin',
    // The pieces of /etc the libraries need: the dynamic loader's (numpy's
    // BLAS is an alternatives link), Debian's matplotlibrc and fontconfig's.
    '--ro-bind-try',
    '/etc/alternatives',
    '/etc/alternatives',
    '--ro-bind-try',
    '/etc/ld.so.cache',
    '/etc/ld.so.cache',
    '--ro-bind-try',
    '/etc/matplotlibrc',
    '/etc/matplotlibrc',
    '--ro-bind-try',
    '/etc/fonts',
    '/etc/fonts',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--bind',
    resolve(workspaceDir),
    '/mnt/data',
    // The sandbox's own root (where /etc, /mnt and the links live) is read-only too; only /tmp and /mnt/data take writes.
    '--remount-ro',
    '/',
    '--chdir',
    '/mnt/data',
    '--clearenv',
    '--setenv',
    'HOME',
    '/mnt/data',
    '--setenv',
    'PATH',
    '/usr/bin',
    '--setenv',
    'MPLBACKEND',
    'Agg',
    '--setenv',
    'MPLCONFIGDIR',
    '/tmp',
    '--setenv',
    'XDG_CACHE_HOME',
    '/tmp/.cache',
    '--setenv',
    'OPENBLAS_NUM_THREADS',
    '1',
    '--',
    '/usr/bin/prlimit',
    `--as=${limits.memoryLimitMb * 1024 * 1024}`,
    `--cpu=${cpuSeconds}`,
    `--fsize=${Math.max(limits.maxFileBytes, 1)}`,
    '--',
    settings.cpython.python,
    '-I',
    '-c',
    CPYTHON_RUNNER,
  ];
}

/**
 * The data-science backend: the operating system's CPython with numpy,
 * pandas and matplotlib, one throw-away bubblewrap sandbox per call. Nothing
 * but the workspace's files outlives a call, so there is no interpreter
 * state to keep or to leak between conversations.
 */
export class CpythonSandboxBackend implements SandboxBackend {
  readonly name = 'cpython';
  private running = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly settings: CodeInterpreterSettings) {}

  async run(req: SandboxRunRequest): Promise<SandboxRunResult> {
    while (this.running >= this.settings.maxWorkers) {
      if (req.signal.aborted) return empty('aborted', 'the call was cancelled');
      await new Promise<void>((wake) => this.waiters.push(wake));
    }
    this.running++;
    try {
      return await this.runOnce(req);
    } finally {
      this.running--;
      this.waiters.shift()?.();
    }
  }

  release(): void {
    // No per-session state.
  }

  async close(): Promise<void> {
    for (const w of this.waiters.splice(0)) w();
  }

  private async runOnce(req: SandboxRunRequest): Promise<SandboxRunResult> {
    await mkdir(req.workspaceDir, { recursive: true });
    const before = await workspaceStamps(req.workspaceDir);
    const child = spawn(this.settings.cpython.bwrap, bwrapArgs(this.settings, req.workspaceDir, req.limits), {
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      env: {},
    });
    const out = { stdout: [] as Buffer[], stderr: [] as Buffer[], bytes: 0, truncated: false };
    const collect = (which: 'stdout' | 'stderr') => (d: Buffer) => {
      const room = req.limits.maxOutputBytes - out.bytes;
      if (room <= 0) {
        out.truncated = true;
        return;
      }
      const part = d.length > room ? d.subarray(0, room) : d;
      if (part.length < d.length) out.truncated = true;
      out.bytes += part.length;
      out[which].push(part);
    };
    child.stdout!.on('data', collect('stdout'));
    child.stderr!.on('data', collect('stderr'));
    let reported = '';
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => (reported += d.toString()));
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(req.code);
    let timedOut = false;
    let aborted = false;
    const soft = setTimeout(() => {
      timedOut = true;
      child.kill('SIGINT');
    }, req.limits.timeoutMs);
    const hard = setTimeout(() => child.kill('SIGKILL'), req.limits.timeoutMs + req.limits.graceMs);
    const onAbort = (): void => {
      aborted = true;
      child.kill('SIGKILL');
    };
    req.signal.addEventListener('abort', onAbort, { once: true });
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((done) => {
      child.on('error', (error) => done({ code: null, signal: null, error }));
      child.on('close', (code, signal) => done({ code, signal }));
    });
    clearTimeout(soft);
    clearTimeout(hard);
    req.signal.removeEventListener('abort', onAbort);

    const after = await workspaceStamps(req.workspaceDir);
    let budget = req.limits.maxFileBytes;
    let filesTruncated = false;
    const changed: string[] = [];
    for (const [path, stamp] of after) {
      if (before.get(path) === stamp) continue;
      const size = Number(stamp.split(':')[0]);
      if (size > budget) {
        filesTruncated = true;
        await removeWorkspaceFile(req.workspaceDir, path);
        continue;
      }
      budget -= size;
      changed.push(path);
    }
    let status: SandboxStatus;
    let message: string | undefined;
    if (exit.error) {
      status = 'crashed';
      message = `the sandbox could not start (${exit.error.message}); is bubblewrap installed?`;
    } else if (aborted) {
      status = 'aborted';
      message = 'the call was cancelled';
    } else if (timedOut) {
      status = 'timeout';
      message = `The code was stopped after ${req.limits.timeoutMs} ms (the time limit).`;
    } else if (reported === 'ok' || reported === 'error' || reported === 'memory' || reported === 'timeout') {
      status = reported;
      if (status === 'memory') message = `The code ran out of memory (limit ${req.limits.memoryLimitMb} MB).`;
      if (status === 'timeout') message = `The code was stopped after ${req.limits.timeoutMs} ms (the time limit).`;
    } else if (exit.signal === 'SIGXCPU' || exit.signal === 'SIGKILL') {
      status = 'timeout';
      message = 'The code used up its CPU time limit.';
    } else {
      status = 'crashed';
      message = `The Python process ended abnormally (${exit.signal ?? `exit ${exit.code}`}).`;
    }
    return {
      status,
      stdout: Buffer.concat(out.stdout).toString('utf8'),
      stderr: Buffer.concat(out.stderr).toString('utf8'),
      outputTruncated: out.truncated,
      changedFiles: changed,
      filesTruncated,
      message,
    };
  }
}

function empty(status: SandboxStatus, message: string): SandboxRunResult {
  return { status, stdout: '', stderr: '', outputTruncated: false, filesTruncated: false, changedFiles: [], message };
}
