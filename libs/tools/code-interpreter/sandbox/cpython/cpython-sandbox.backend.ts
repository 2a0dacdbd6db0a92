import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Writable } from 'node:stream';
import type { CodeInterpreterSettings } from '../../config/code-interpreter-settings.js';
import { SandboxBoundary } from '../cgroups/sandbox-boundary.js';
import type { SandboxCgroup } from '../cgroups/sandbox-cgroups.js';
import { ContainerDir } from '../container-fs.js';
import { CPYTHON_RUNNER, CPYTHON_SUPERVISOR } from '../python-runner.js';
import { type FontCacheFile, matplotlibFontCache } from './font-cache.js';
import type { SandboxBackend, SandboxRunRequest, SandboxRunResult, SandboxStatus } from '../sandbox-backend.interface.js';
import { applyReport, type ReportedFile } from '../workspace-files.js';

/** The sandbox's /tmp: memory, so bounded too. */
const TMP_BYTES = 64 * 1024 * 1024;
/** tmpfs stores a file in whole pages: room for the copied-in files' last pages on top of the byte quota. */
const PAGE = 4096;
/** Seconds the supervisor has after the program's grace to report the files, before the gateway kills the sandbox. */
const REPORT_MS = 5_000;

/** What differs between the sandbox of one call (`cpython`) and a long-lived kernel's (`kernel`). */
export interface SandboxShape {
  /** Size of the /mnt/data tmpfs. */
  workspaceBytes: number;
  memoryLimitMb: number;
  cpuSeconds: number;
  /** Scheduling priority (nice) of everything in the sandbox, so tenants' programs yield the CPU to the gateway's requests. */
  nice: number;
  /** What runs inside, after the limits: the interpreter and its arguments. */
  program: string[];
  /** Host directories (absolute) bound writable at the given place inside (a Jupyter kernel's socket directory, writable by the sandbox's uid only until the kernel has bound its sockets). */
  binds?: Array<{ host: string; inside: string }>;
  /** Files copied in from a descriptor bubblewrap is given (a Jupyter kernel's connection file, into the sandbox's own /tmp). */
  fileFds?: Array<{ fd: string; inside: string }>;
  /** Host files bound read-only into the sandbox's /tmp (matplotlib's font list, `font-cache.ts`). */
  readOnlyFiles?: Array<{ host: string; inside: string }>;
  /** Variables set inside besides the fixed ones. */
  env?: Record<string, string>;
}

/**
 * bubblewrap arguments: every namespace unshared (no network, own PIDs, an
 * unprivileged user), the OS's /usr read-only, of /etc only what the dynamic
 * loader needs, none of the gateway's files, a private /tmp, and /mnt/data a
 * tmpfs of `workspaceBytes` as the only other writable place. No host
 * directory is bound (the container's files are sent in by the gateway):
 * nothing the program does can create a file, a link or a byte on the
 * gateway's disk.
 */
export function sandboxArgs(shape: SandboxShape): string[] {
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
    '--size',
    String(TMP_BYTES),
    '--tmpfs',
    '/tmp',
    ...(shape.fileFds ?? []).flatMap((f) => ['--file', f.fd, f.inside]),
    ...(shape.readOnlyFiles ?? []).flatMap((f) => ['--ro-bind', f.host, f.inside]),
    '--size',
    String(shape.workspaceBytes),
    '--tmpfs',
    '/mnt/data',
    ...(shape.binds ?? []).flatMap((b) => ['--bind', b.host, b.inside]),
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
    ...Object.entries(shape.env ?? {}).flatMap(([k, v]) => ['--setenv', k, v]),
    '--',
    '/usr/bin/nice',
    '-n',
    String(shape.nice),
    '/usr/bin/prlimit',
    `--as=${shape.memoryLimitMb * 1024 * 1024}`,
    `--cpu=${shape.cpuSeconds}`,
    '--',
    ...shape.program,
  ];
}

/** Where a sandbox's matplotlib finds the host's font list: its `MPLCONFIGDIR` is the sandbox's /tmp. */
export function fontCacheFiles(fonts: FontCacheFile | null): Array<{ host: string; inside: string }> {
  return fonts ? [{ host: fonts.host, inside: `/tmp/${fonts.name}` }] : [];
}

/** bubblewrap arguments for one `cpython` call: the supervisor around the runner (the container's files come on descriptor 5). */
export function bwrapArgs(settings: CodeInterpreterSettings, limits: SandboxRunRequest['limits'], workspaceBytes: number, fonts: FontCacheFile | null = null): string[] {
  return sandboxArgs({
    workspaceBytes,
    readOnlyFiles: fontCacheFiles(fonts),
    memoryLimitMb: limits.memoryLimitMb,
    cpuSeconds: Math.max(1, Math.ceil((limits.timeoutMs + limits.graceMs) / 1000)),
    nice: settings.nice,
    program: [settings.cpython.python, '-I', '-c', CPYTHON_SUPERVISOR, String(limits.timeoutMs), String(limits.graceMs), CPYTHON_RUNNER],
  });
}

/**
 * The data-science backend: the operating system's CPython with numpy,
 * pandas and matplotlib, one throw-away bubblewrap sandbox per call. Nothing
 * but the workspace's files outlives a call, so there is no interpreter
 * state to keep or to leak between conversations.
 */
export class CpythonSandboxBackend implements SandboxBackend {
  readonly name = 'cpython';
  readonly capabilities =
    'Each call runs in a fresh Python process: variables and imports do NOT persist between calls (files in /mnt/data do). ' +
    'Installed: numpy, pandas, matplotlib and the standard library; figures left open are saved as images.';
  private running = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(
    private readonly settings: CodeInterpreterSettings,
    readonly boundary: SandboxBoundary = SandboxBoundary.for(settings),
  ) {}

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
    const workspace = new ContainerDir(req.workspaceDir);
    await workspace.create();
    const present = await workspace.list();
    let presentBytes = 0;
    for (const st of present.values()) presentBytes += st.size;
    // The container's files, the bytes it may still take, and the pages the files round up to.
    const room = req.limits.maxWorkspaceBytes ?? req.limits.maxFileBytes + presentBytes;
    const workspaceBytes = Math.max(room, presentBytes) + PAGE * (present.size + 256);
    // The call's own cgroup: every process the program starts is in it, capped together, and killed with it at the end.
    const cgroup = this.boundary.create(`c-${req.session}-${randomBytes(4).toString('hex')}`);
    try {
      return await this.runIn(cgroup, req, workspaceBytes, [...present.keys()]);
    } finally {
      await cgroup?.remove();
    }
  }

  private async runIn(cgroup: SandboxCgroup | undefined, req: SandboxRunRequest, workspaceBytes: number, files: string[]): Promise<SandboxRunResult> {
    const fonts = await matplotlibFontCache(this.settings.cpython.python);
    const [command, ...args] = this.boundary.wrap(cgroup, [this.settings.cpython.bwrap, ...bwrapArgs(this.settings, req.limits, workspaceBytes, fonts)]);
    const child = spawn(command, args, {
      stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
      // bubblewrap and the program get nothing of the gateway's environment (--clearenv inside, too).
      env: {},
    });
    void sendFiles((child.stdio as unknown[])[5] as Writable, new ContainerDir(req.workspaceDir), files);
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
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => {
      if (reported.length < 64) reported += d.toString();
    });
    const report = new ReportReader(workspaceBytes * 2 + (1 << 20));
    (child.stdio[4] as NodeJS.ReadableStream).on('data', (d: Buffer) => report.push(d));
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(req.code);
    // The supervisor interrupts the program at the time limit and reports its files; this is the backstop should it not.
    let killed = false;
    let aborted = false;
    const hard = setTimeout(
      () => {
        killed = true;
        child.kill('SIGKILL');
      },
      req.limits.timeoutMs + req.limits.graceMs + REPORT_MS,
    );
    const onAbort = (): void => {
      aborted = true;
      child.kill('SIGKILL');
    };
    req.signal.addEventListener('abort', onAbort, { once: true });
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((done) => {
      child.on('error', (error) => done({ code: null, signal: null, error }));
      child.on('close', (code, signal) => done({ code, signal }));
    });
    clearTimeout(hard);
    req.signal.removeEventListener('abort', onAbort);

    const parsed = report.records();
    const applied = aborted ? { changed: [], truncated: false } : await applyReport(req.workspaceDir, parsed.files, parsed.deleted, req.limits.maxFileBytes);
    const ended = endOf({ exit, aborted, killed, reported, exitCode: parsed.exitCode, oomKills: cgroup?.oomKills() ?? 0 }, req);
    return {
      ...ended,
      stdout: Buffer.concat(out.stdout).toString('utf8'),
      stderr: Buffer.concat(out.stderr).toString('utf8'),
      outputTruncated: out.truncated,
      changedFiles: applied.changed,
      filesTruncated: applied.truncated || parsed.truncated,
    };
  }
}

/**
 * How a run ended: the runner's own word on descriptor 3 first; else the
 * exit code of the program's process (0 is a program that ended itself,
 * `os._exit(0)` included; killed by SIGKILL or SIGXCPU is the time limit);
 * else what happened to the sandbox.
 */
function endOf(
  run: {
    exit: { code: number | null; signal: NodeJS.Signals | null; error?: Error };
    aborted: boolean;
    killed: boolean;
    reported: string;
    exitCode: number | undefined;
    oomKills: number;
  },
  req: SandboxRunRequest,
): { status: SandboxStatus; message?: string } {
  const timeLimit = `The code was stopped after ${req.limits.timeoutMs} ms (the time limit).`;
  if (run.exit.error) return { status: 'crashed', message: `the sandbox could not start (${run.exit.error.message}); is bubblewrap installed?` };
  if (run.aborted) return { status: 'aborted', message: 'the call was cancelled' };
  const said = run.reported;
  if (said === 'ok' || said === 'error') return { status: said };
  if (said === 'memory') return { status: 'memory', message: `The code ran out of memory (limit ${req.limits.memoryLimitMb} MB).` };
  if (said === 'timeout') return { status: 'timeout', message: timeLimit };
  const rc = run.exitCode;
  // The container's cgroup was full: its OOM killer took a process (the program, or a child it waited for).
  if (run.oomKills > 0 && rc !== 0) return { status: 'memory', message: containerMemory(req) };
  if (rc === 0) return { status: 'ok' };
  // -9: the supervisor killed it after the grace; -2: interrupted before the runner could catch it
  // (still starting); -24: SIGXCPU, the CPU-seconds limit.
  if (rc === -9 || rc === -2 || rc === -24) return { status: 'timeout', message: rc === -24 ? 'The code used up its CPU time limit.' : timeLimit };
  if (rc !== undefined && rc > 0) return { status: 'error', message: `The program exited with status ${rc}.` };
  if (run.killed || run.exit.signal === 'SIGXCPU') return { status: 'timeout', message: timeLimit };
  return { status: 'crashed', message: `The Python process ended abnormally (${rc !== undefined ? `signal ${-rc}` : (run.exit.signal ?? `exit ${run.exit.code}`)}).` };
}

/**
 * The supervisor's report (see `CPYTHON_SUPERVISOR`), read as untrusted
 * input: at most `maxBytes` are kept, and a malformed record ends the
 * parse (what came before it stands).
 */
class ReportReader {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private overflow = false;

  constructor(private readonly maxBytes: number) {}

  push(d: Buffer): void {
    if (this.bytes + d.length > this.maxBytes) {
      this.overflow = true;
      return;
    }
    this.bytes += d.length;
    this.chunks.push(d);
  }

  records(): { files: ReportedFile[]; deleted: string[]; exitCode: number | undefined; truncated: boolean } {
    const buf = Buffer.concat(this.chunks);
    const files: ReportedFile[] = [];
    const deleted: string[] = [];
    let exitCode: number | undefined;
    let at = 0;
    while (at + 13 <= buf.length) {
      const kind = String.fromCharCode(buf[at]);
      const nameLength = buf.readUInt32BE(at + 1);
      const nameEnd = at + 5 + nameLength;
      if (nameLength > 4096 || nameEnd + 8 > buf.length) break;
      const name = buf.toString('utf8', at + 5, nameEnd);
      const dataLength = Number(buf.readBigUInt64BE(nameEnd));
      const dataEnd = nameEnd + 8 + dataLength;
      if (dataEnd > buf.length) break;
      if (kind === 'F') files.push({ path: name, data: buf.subarray(nameEnd + 8, dataEnd) });
      else if (kind === 'D') deleted.push(name);
      else if (kind === 'X' && /^-?\d{1,4}$/.test(name)) exitCode = Number(name);
      else break;
      at = dataEnd;
    }
    return { files, deleted, exitCode, truncated: this.overflow };
  }
}

/**
 * The container's files to the supervisor, as records (see
 * `CPYTHON_SUPERVISOR`), read through `ContainerDir` one at a time. A
 * sandbox that dies early closes the pipe: the rest is dropped.
 */
async function sendFiles(to: Writable, dir: ContainerDir, paths: Iterable<string>): Promise<void> {
  to.on('error', () => undefined);
  const write = (chunk: Buffer): Promise<void> => new Promise((done) => (to.write(chunk) ? done() : to.once('drain', done).once('close', done)));
  try {
    for (const path of paths) {
      const data = await dir.read(path).catch(() => undefined);
      if (!data || to.destroyed) continue;
      const name = Buffer.from(path);
      const head = Buffer.alloc(13 + name.length);
      head.write('F', 0);
      head.writeUInt32BE(name.length, 1);
      name.copy(head, 5);
      head.writeBigUInt64BE(BigInt(data.length), 5 + name.length);
      await write(head);
      await write(data);
    }
  } finally {
    to.end();
  }
}

/** What the model reads when the container's processes together passed the memory limit. */
export function containerMemory(req: SandboxRunRequest): string {
  return `The code ran out of memory (limit ${req.limits.memoryLimitMb} MB for all the container's processes together).`;
}

function empty(status: SandboxStatus, message: string): SandboxRunResult {
  return { status, stdout: '', stderr: '', outputTruncated: false, filesTruncated: false, changedFiles: [], message };
}
