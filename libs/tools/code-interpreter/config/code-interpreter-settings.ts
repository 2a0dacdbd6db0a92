import { existsSync } from 'node:fs';

/**
 * The `codeInterpreter` section of the gateway config, owned by this module
 * and checked once when it starts, so a typo fails the boot with the
 * setting's name rather than the first call.
 */

export class CodeInterpreterConfigError extends Error {}

export const CODE_INTERPRETER_SETTINGS = Symbol('CODE_INTERPRETER_SETTINGS');

export type SandboxBackendName = 'pyodide' | 'cpython' | 'kernel';

export interface CodeInterpreterSettings {
  /**
   * `kernel`: one long-lived OS Python per container (numpy, pandas, matplotlib, scipy) in a bubblewrap sandbox, variables kept.
   * `cpython`: the same sandbox, a fresh process per call. `pyodide`: embedded WASM, no set-up, standard library only.
   * `auto` (the default): `kernel` where the host has bubblewrap and the packages, else `pyodide`.
   */
  backend: SandboxBackendName | 'auto';
  /** Where container workspaces live on the gateway host. */
  dataDir: string;
  /** Sandbox processes at most (Pyodide: one interpreter each; CPython: calls at once). */
  maxWorkers: number;
  /** Pyodide: interpreters kept loaded and unbound, so a new conversation does not wait for a cold start. */
  warmWorkers: number;
  /** Wall time of one call before it is interrupted. */
  timeoutMs: number;
  /** After the interrupt, how long the code may take to unwind before its process is killed. */
  graceMs: number;
  /** Memory of one sandbox (Pyodide: WASM memory; CPython: address space). */
  memoryLimitMb: number;
  /** stdout + stderr kept per call; the rest is cut and marked. */
  maxOutputBytes: number;
  /** Bytes of files one call may write back to the workspace. */
  maxFileBytesPerCall: number;
  /** Bytes one container holds at most (uploads and generated files). */
  maxContainerBytes: number;
  /** Live containers one owner (API key, OIDC subject) may have; past it creating one is a 403 `quota_exceeded`. */
  maxContainersPerOwner: number;
  /** Bytes all of one owner's containers hold together (uploads and what runs write). */
  maxBytesPerOwner: number;
  /** Calls one container (one conversation) may run; then each call fails with a message. */
  maxCallsPerContainer: number;
  /** A container unused for this long is deleted with its files and its interpreter. */
  idleExpiryMs: number;
  cpython: { python: string; bwrap: string };
  /** Scheduling priority (nice, 0-19) of the `cpython` and `kernel` sandboxes: a CPU-bound program yields to the gateway's own requests. */
  nice: number;
  /** The `kernel` backend's bounds (see `KernelSettings`). */
  kernel: KernelSettings;
  /** Pyodide: pure-Python wheels (`.whl` files) put on every interpreter's import path. */
  wheels: string[];
  /** How the gateway's processes reach a container's home (see `InternalSettings`). */
  internal: InternalSettings;
}

export interface KernelSettings {
  /** Kernels bound to containers at most in this process; past it the least recently used idle one is stopped (its container is told on its next call). */
  maxLive: number;
  /** Kernels started ahead, bound to no container, so a new container's first call does not wait for Python and the data stack to load. */
  warm: number;
  /** A container's kernel unused this long is stopped (the container and its files stay until `idleExpiryMs`). */
  idleMs: number;
}

/**
 * The internal listener: each process that holds containers answers the
 * container operations other processes forward to it there.
 */
export interface InternalSettings {
  /** Where it listens (loopback by default: the workers of one host). */
  host: string;
  /** 0: an ephemeral port. */
  port: number;
  /** The address other processes use (`http://host:port`); set it for replicas on other hosts. */
  url: string | null;
  /**
   * The credential forwarded operations carry, the same in every process. In
   * worker mode the primary generates one for its workers; replicas must be
   * given one (`SWITCHYARD_INTERNAL_SECRET`). Unset: random per process.
   */
  secret: string | null;
  /** A process that has not renewed its lease for this long is gone: its containers are taken over. */
  leaseMs: number;
}

export const DEFAULT_CODE_INTERPRETER_SETTINGS: CodeInterpreterSettings = {
  backend: 'auto',
  dataDir: '.switchyard/containers',
  maxWorkers: 2,
  warmWorkers: 1,
  timeoutMs: 30_000,
  graceMs: 2_000,
  memoryLimitMb: 512,
  maxOutputBytes: 64 * 1024,
  maxFileBytesPerCall: 16 * 1024 * 1024,
  maxContainerBytes: 64 * 1024 * 1024,
  maxContainersPerOwner: 50,
  maxBytesPerOwner: 1024 * 1024 * 1024,
  maxCallsPerContainer: 500,
  idleExpiryMs: 20 * 60_000,
  cpython: { python: '/usr/bin/python3', bwrap: 'bwrap' },
  nice: 10,
  kernel: { maxLive: 8, warm: 1, idleMs: 20 * 60_000 },
  wheels: [],
  internal: { host: '127.0.0.1', port: 0, url: null, secret: null, leaseMs: 10_000 },
};

type IntKey =
  | 'maxWorkers'
  | 'warmWorkers'
  | 'timeoutMs'
  | 'graceMs'
  | 'memoryLimitMb'
  | 'maxOutputBytes'
  | 'maxFileBytesPerCall'
  | 'maxContainerBytes'
  | 'maxContainersPerOwner'
  | 'maxBytesPerOwner'
  | 'maxCallsPerContainer'
  | 'idleExpiryMs';

const RANGES: Record<IntKey, [number, number]> = {
  maxWorkers: [1, 64],
  warmWorkers: [0, 64],
  timeoutMs: [100, 3_600_000],
  graceMs: [0, 60_000],
  memoryLimitMb: [64, 4096],
  maxOutputBytes: [1024, 64 * 1024 * 1024],
  maxFileBytesPerCall: [0, 1024 * 1024 * 1024],
  maxContainerBytes: [1024, 16 * 1024 * 1024 * 1024],
  maxContainersPerOwner: [1, 1_000_000],
  maxBytesPerOwner: [1024, 1024 * 1024 * 1024 * 1024],
  maxCallsPerContainer: [1, 1_000_000],
  idleExpiryMs: [1_000, 30 * 24 * 3_600_000],
};

function fail(setting: string, message: string, value?: unknown): never {
  const got = value === undefined ? '' : ` (got ${JSON.stringify(value)})`;
  throw new CodeInterpreterConfigError(`Invalid configuration: codeInterpreter.${setting}: ${message}${got}`);
}

export function parseCodeInterpreterSettings(raw: Record<string, unknown> | undefined): CodeInterpreterSettings {
  const out: CodeInterpreterSettings = {
    ...DEFAULT_CODE_INTERPRETER_SETTINGS,
    cpython: { ...DEFAULT_CODE_INTERPRETER_SETTINGS.cpython },
    kernel: { ...DEFAULT_CODE_INTERPRETER_SETTINGS.kernel },
    wheels: [],
    internal: { ...DEFAULT_CODE_INTERPRETER_SETTINGS.internal },
  };
  if (!raw) return out;
  for (const key of Object.keys(raw)) {
    if (!(key in out)) fail(key, 'is not a known setting');
  }
  if (raw.backend !== undefined) {
    if (!['auto', 'kernel', 'pyodide', 'cpython'].includes(raw.backend as string)) fail('backend', 'must be "auto", "kernel", "pyodide" or "cpython"', raw.backend);
    out.backend = raw.backend as CodeInterpreterSettings['backend'];
  }
  if (raw.dataDir !== undefined) {
    if (typeof raw.dataDir !== 'string' || raw.dataDir === '') fail('dataDir', 'must be a non-empty path', raw.dataDir);
    out.dataDir = raw.dataDir;
  }
  for (const key of Object.keys(RANGES) as IntKey[]) {
    const value = raw[key];
    if (value === undefined) continue;
    const [min, max] = RANGES[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) fail(key, `must be an integer from ${min} to ${max}`, value);
    out[key] = value;
  }
  if (out.warmWorkers > out.maxWorkers) fail('warmWorkers', `must not exceed maxWorkers (${out.maxWorkers})`, out.warmWorkers);
  if (raw.cpython !== undefined) {
    const c = raw.cpython as Record<string, unknown>;
    if (!c || typeof c !== 'object' || Array.isArray(c)) fail('cpython', 'must be an object', raw.cpython);
    for (const key of Object.keys(c)) {
      if (key !== 'python' && key !== 'bwrap') fail(`cpython.${key}`, 'is not a known setting');
      if (typeof c[key] !== 'string' || c[key] === '') fail(`cpython.${key}`, 'must be a non-empty path', c[key]);
    }
    Object.assign(out.cpython, c);
  }
  if (raw.internal !== undefined) out.internal = parseInternal(raw.internal);
  if (raw.nice !== undefined) {
    if (typeof raw.nice !== 'number' || !Number.isInteger(raw.nice) || raw.nice < 0 || raw.nice > 19) fail('nice', 'must be an integer from 0 to 19', raw.nice);
    out.nice = raw.nice;
  }
  if (raw.kernel !== undefined) out.kernel = parseKernel(raw.kernel);
  if (raw.wheels !== undefined) {
    if (!Array.isArray(raw.wheels)) fail('wheels', 'must be a list of .whl file paths', raw.wheels);
    out.wheels = raw.wheels.map((w, i) => {
      // Pure-Python wheels only: they are imported from the zip as they are, nothing is compiled.
      if (typeof w !== 'string' || !/-none-any\.whl$/.test(w)) fail(`wheels[${i}]`, 'must be a pure-Python wheel (*-none-any.whl)', w);
      if (!existsSync(w)) fail(`wheels[${i}]`, 'no such file', w);
      return w;
    });
  }
  return out;
}

function parseInternal(raw: unknown): InternalSettings {
  const out = { ...DEFAULT_CODE_INTERPRETER_SETTINGS.internal };
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) fail('internal', 'must be an object', raw);
  const r = raw as Record<string, unknown>;
  for (const key of Object.keys(r)) if (!(key in out)) fail(`internal.${key}`, 'is not a known setting');
  if (r.host !== undefined) {
    if (typeof r.host !== 'string' || r.host === '') fail('internal.host', 'must be a host name or address', r.host);
    out.host = r.host;
  }
  if (r.port !== undefined) {
    if (typeof r.port !== 'number' || !Number.isInteger(r.port) || r.port < 0 || r.port > 65535) fail('internal.port', 'must be an integer from 0 to 65535', r.port);
    out.port = r.port;
  }
  if (r.url !== undefined && r.url !== null) {
    if (typeof r.url !== 'string' || !/^https?:\/\/[^/]+\/?$/.test(r.url)) fail('internal.url', 'must be an http(s) origin such as http://10.0.0.5:8081', r.url);
    out.url = r.url.replace(/\/$/, '');
  }
  if (r.secret !== undefined && r.secret !== null) {
    // Not echoed in the error: it is a credential.
    if (typeof r.secret !== 'string' || r.secret.length < 16) fail('internal.secret', 'must be a string of at least 16 characters');
    out.secret = r.secret;
  }
  if (r.leaseMs !== undefined) {
    if (typeof r.leaseMs !== 'number' || !Number.isInteger(r.leaseMs) || r.leaseMs < 300 || r.leaseMs > 600_000)
      fail('internal.leaseMs', 'must be an integer from 300 to 600000', r.leaseMs);
    out.leaseMs = r.leaseMs;
  }
  return out;
}

const KERNEL_RANGES: Record<keyof KernelSettings, [number, number]> = { maxLive: [1, 1024], warm: [0, 64], idleMs: [1_000, 30 * 24 * 3_600_000] };

function parseKernel(raw: unknown): KernelSettings {
  const out = { ...DEFAULT_CODE_INTERPRETER_SETTINGS.kernel };
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) fail('kernel', 'must be an object', raw);
  const r = raw as Record<string, unknown>;
  for (const key of Object.keys(r)) {
    if (!(key in KERNEL_RANGES)) fail(`kernel.${key}`, 'is not a known setting');
    const [min, max] = KERNEL_RANGES[key as keyof KernelSettings];
    const value = r[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) fail(`kernel.${key}`, `must be an integer from ${min} to ${max}`, value);
    out[key as keyof KernelSettings] = value;
  }
  return out;
}
