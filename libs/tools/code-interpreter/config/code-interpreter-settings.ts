import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, Min, MinLength, ValidateNested } from 'class-validator';
import { defineConfigSection } from '#tool-sdk/index.js';

/**
 * The `codeInterpreter` section of the gateway config, owned by this module
 * and checked once when it starts, so a typo fails the boot with the
 * setting's name rather than the first call.
 */

export class CodeInterpreterConfigError extends Error {}

export const CODE_INTERPRETER_SETTINGS = Symbol('CODE_INTERPRETER_SETTINGS');

export type SandboxBackendName = 'pyodide' | 'cpython' | 'kernel';

/** `codeInterpreter.kernel`: the `kernel` backend's bounds. */
export class KernelSettings {
  /** Kernels bound to containers at most in this process; past it the least recently used idle one is stopped (its container is told on its next call). */
  @IsInt() @Min(1) @Max(1024) maxLive = 8;
  /** Kernels started ahead, bound to no container, so a new container's first call does not wait for Python and the data stack to load. */
  @IsInt() @Min(0) @Max(64) warm = 1;
  /** A container's kernel unused this long is stopped (the container and its files stay until `idleExpiryMs`). */
  @IsInt() @Min(1_000) @Max(30 * 24 * 3_600_000) idleMs = 20 * 60_000;
  /**
   * The Jupyter Server hosting the kernels. Unset (the default): each home
   * process starts and supervises its own, on 127.0.0.1 with a random token.
   * Set: an operator-run server started with the gateway's kernelspec
   * (`JupyterHost`), shared by the processes given the same URL and token.
   */
  @IsOptional() @Matches(/^https?:\/\/[^/]+\/?$/, { message: 'must be an http(s) origin such as http://127.0.0.1:8888' }) jupyterUrl: string | null = null;
  /** The token of `jupyterUrl`'s server. */
  @IsOptional() @IsString() @MinLength(16) jupyterToken: string | null = null;
}

/** `codeInterpreter.cpython`: the interpreter and the sandbox tool of the CPython backend. */
export class CpythonSettings {
  @IsString() @MinLength(1) python = '/usr/bin/python3';
  @IsString() @MinLength(1) bwrap = 'bwrap';
}

/**
 * `codeInterpreter.sandbox`: the resource boundary of each container of the
 * `kernel` and `cpython` backends (its own cgroup under the gateway's, see
 * `sandbox/cgroups/sandbox-cgroups.ts`) and the host user it runs as.
 */
export class SandboxBoundarySettings {
  /** Where the cgroup file systems are mounted: the v2 unified hierarchy itself, or v1 controllers beneath it (`pids`, `memory`, `cpu`). */
  @IsString() @MinLength(1) cgroupRoot = '/sys/fs/cgroup';
  /** Processes (and threads) of one container at most, all of them together: fork() fails past it. */
  @IsInt() @Min(8) @Max(32_768) maxProcesses = 128;
  /** CPU weight of a container's cgroup on cgroup v2's scale, where the gateway's is 100 (v1: cpu.shares = 1024 × weight / 100). */
  @IsInt() @Min(1) @Max(99) cpuWeight = 10;
  /** Host uid and gid the sandbox runs as when the gateway runs as root (otherwise the gateway's own, already unprivileged). */
  @IsInt() @Min(1) @Max(4_294_967_294) uid = 65534;
  @IsInt() @Min(1) @Max(4_294_967_294) gid = 65534;
  /**
   * Where the host gives no cgroup control for a limit, the code interpreter
   * serves one owner only (one tenant cannot then starve another); true says
   * the operator accepts serving many without those limits.
   */
  @IsBoolean() allowManyOwnersWithoutLimits = false;
}

/**
 * The internal listener: each process that holds containers answers the
 * container operations other processes forward to it there.
 */
export class InternalSettings {
  /** Where it listens (loopback by default: the workers of one host). */
  @IsString() @MinLength(1) host = '127.0.0.1';
  /** 0: an ephemeral port. */
  @IsInt() @Min(0) @Max(65535) port = 0;
  /** The address other processes use (`http://host:port`); set it for replicas on other hosts. */
  @IsOptional() @Matches(/^https?:\/\/[^/]+\/?$/, { message: 'must be an http(s) origin such as http://10.0.0.5:8081' }) url: string | null = null;
  /**
   * The credential forwarded operations carry, the same in every process. In
   * worker mode the primary generates one for its workers; replicas must be
   * given one (`SWITCHYARD_INTERNAL_SECRET`). Unset: random per process.
   */
  @IsOptional() @IsString() @MinLength(16) secret: string | null = null;
  /** A process that has not renewed its lease for this long is gone: its containers are taken over. */
  @IsInt() @Min(300) @Max(600_000) leaseMs = 10_000;
}

export class CodeInterpreterSettings {
  /**
   * `kernel`: one long-lived OS Python per container (numpy, pandas, matplotlib, scipy) in a bubblewrap sandbox, variables kept.
   * `cpython`: the same sandbox, a fresh process per call. `pyodide`: embedded WASM, no set-up, standard library only.
   * `auto` (the default): `kernel` where the host has bubblewrap and the packages, else `pyodide`.
   */
  @IsIn(['auto', 'kernel', 'pyodide', 'cpython']) backend: SandboxBackendName | 'auto' = 'auto';
  /** Where container workspaces live on the gateway host. */
  @IsString() @MinLength(1) dataDir = '.switchyard/containers';
  /** Sandbox processes at most (Pyodide: one interpreter each; CPython: calls at once). */
  @IsInt() @Min(1) @Max(64) maxWorkers = 2;
  /** Pyodide: interpreters kept loaded and unbound, so a new conversation does not wait for a cold start. */
  @IsInt() @Min(0) @Max(64) warmWorkers = 1;
  /** Wall time of one call before it is interrupted. */
  @IsInt() @Min(100) @Max(3_600_000) timeoutMs = 30_000;
  /** After the interrupt, how long the code may take to unwind before its process is killed. */
  @IsInt() @Min(0) @Max(60_000) graceMs = 2_000;
  /** Memory of one container (kernel, cpython: its cgroup, all its processes together, and each process's address space; Pyodide: WASM memory). */
  @IsInt() @Min(64) @Max(4096) memoryLimitMb = 512;
  /** stdout + stderr kept per call; the rest is cut and marked. */
  @IsInt() @Min(1024) @Max(64 * 1024 * 1024) maxOutputBytes = 64 * 1024;
  /** Bytes of files one call may write back to the workspace. */
  @IsInt() @Min(0) @Max(1024 * 1024 * 1024) maxFileBytesPerCall = 16 * 1024 * 1024;
  /** Bytes one container holds at most (uploads and generated files). */
  @IsInt() @Min(1024) @Max(16 * 1024 * 1024 * 1024) maxContainerBytes = 64 * 1024 * 1024;
  /** Live containers one owner (API key, OIDC subject) may have; past it creating one is a 403 `quota_exceeded`. */
  @IsInt() @Min(1) @Max(1_000_000) maxContainersPerOwner = 50;
  /** Bytes all of one owner's containers hold together (uploads and what runs write). */
  @IsInt() @Min(1024) @Max(1024 * 1024 * 1024 * 1024) maxBytesPerOwner = 1024 * 1024 * 1024;
  /** Calls one container (one conversation) may run; then each call fails with a message. */
  @IsInt() @Min(1) @Max(1_000_000) maxCallsPerContainer = 500;
  /** A container unused for this long is deleted with its files and its interpreter. */
  @IsInt() @Min(1_000) @Max(30 * 24 * 3_600_000) idleExpiryMs = 20 * 60_000;
  @IsObject() @ValidateNested() @Type(() => CpythonSettings) cpython = new CpythonSettings();
  /** Scheduling priority (nice, 0-19) of the `cpython` and `kernel` sandboxes: a CPU-bound program yields to the gateway's own requests. */
  @IsInt() @Min(0) @Max(19) nice = 10;
  /** The container's resource boundary (`kernel`, `cpython`). */
  @IsObject() @ValidateNested() @Type(() => SandboxBoundarySettings) sandbox = new SandboxBoundarySettings();
  /** The `kernel` backend's bounds. */
  @IsObject() @ValidateNested() @Type(() => KernelSettings) kernel = new KernelSettings();
  /** Pyodide: pure-Python wheels (`.whl` files) put on every interpreter's import path; checked by `wheelProblems`. */
  @IsArray() @IsString({ each: true }) wheels: string[] = [];
  /** How the gateway's processes reach a container's home (see `InternalSettings`). */
  @IsObject() @ValidateNested() @Type(() => InternalSettings) internal = new InternalSettings();
}

export const DEFAULT_CODE_INTERPRETER_SETTINGS: CodeInterpreterSettings = new CodeInterpreterSettings();

/** Rules across settings, and the wheels' files: pure-Python ones only (imported from the zip as they are, nothing compiled), present at boot. */
function crossProblems(s: CodeInterpreterSettings): string[] {
  const problems: string[] = [];
  if (Number.isInteger(s.warmWorkers) && Number.isInteger(s.maxWorkers) && s.warmWorkers > s.maxWorkers) {
    problems.push(`codeInterpreter.warmWorkers: must not exceed maxWorkers (${s.maxWorkers}) (got ${s.warmWorkers})`);
  }
  if (Array.isArray(s.wheels)) {
    s.wheels.forEach((w, i) => {
      if (typeof w !== 'string') return;
      if (!/-none-any\.whl$/.test(w)) problems.push(`codeInterpreter.wheels[${i}]: must be a pure-Python wheel (*-none-any.whl) (got ${JSON.stringify(w)})`);
      else if (!existsSync(w)) problems.push(`codeInterpreter.wheels[${i}]: no such file (got ${JSON.stringify(w)})`);
    });
  }
  return problems;
}

/** The `codeInterpreter` section: the sandbox backend and its bounds. */
export const codeInterpreterConfigSection = defineConfigSection({
  key: 'codeInterpreter',
  type: CodeInterpreterSettings,
  token: CODE_INTERPRETER_SETTINGS,
  env: [
    { env: 'CODE_INTERPRETER_BACKEND', path: 'backend', kind: 'string' },
    { env: 'CODE_INTERPRETER_MAX_CONTAINERS_PER_OWNER', path: 'maxContainersPerOwner', kind: 'int' },
    { env: 'CODE_INTERPRETER_MAX_BYTES_PER_OWNER', path: 'maxBytesPerOwner', kind: 'int' },
    // Made by the primary of worker mode for its workers (handed over with the other secrets); replicas are given the same value.
    { env: 'SWITCHYARD_INTERNAL_SECRET', path: 'internal.secret', kind: 'string', secret: true },
    { env: 'SWITCHYARD_INTERNAL_URL', path: 'internal.url', kind: 'string' },
  ],
  fromDataDir: (dataDir) => ({ dataDir: join(dataDir, 'containers') }),
  check: crossProblems,
  settings: (settings) => {
    // Joined with paths later: one trailing slash or none must give the same origin.
    if (settings.internal.url) settings.internal.url = settings.internal.url.replace(/\/$/, '');
    return settings;
  },
});

/** Validates a raw `codeInterpreter` section (defaults when absent), outside the Nest container. */
export function parseCodeInterpreterSettings(raw: Record<string, unknown> | undefined): CodeInterpreterSettings {
  try {
    return codeInterpreterConfigSection.parse(raw);
  } catch (err) {
    throw new CodeInterpreterConfigError((err as Error).message);
  }
}
