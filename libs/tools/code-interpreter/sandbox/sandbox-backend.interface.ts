import type { SandboxBoundary } from './cgroups/sandbox-boundary.js';

/** How one program ended. `timeout`, `memory` and `crashed` also recycle the sandbox. */
export type SandboxStatus = 'ok' | 'error' | 'timeout' | 'memory' | 'crashed' | 'aborted';

export interface SandboxLimits {
  timeoutMs: number;
  graceMs: number;
  memoryLimitMb: number;
  maxOutputBytes: number;
  /** Bytes of files one call may write back. */
  maxFileBytes: number;
  /**
   * Bytes the workspace may hold during the run (its files and what the
   * program writes), the container's and its owner's quota room: the CPython
   * sandbox's /mnt/data is a tmpfs of this size. Default: the files present
   * plus `maxFileBytes`.
   */
  maxWorkspaceBytes?: number;
}

export interface SandboxRunRequest {
  /**
   * The container the program belongs to. A backend that keeps interpreter
   * state between calls keeps it per session and never lets another session
   * see it.
   */
  session: string;
  /** The container's workspace on the host, seen by the program as /mnt/data. */
  workspaceDir: string;
  code: string;
  limits: SandboxLimits;
  signal: AbortSignal;
  /** Programs the container ran before this one (anywhere): a backend that finds no state for a container that had some says it was reset. */
  priorCalls?: number;
}

export interface SandboxRunResult {
  status: SandboxStatus;
  stdout: string;
  stderr: string;
  outputTruncated: boolean;
  /** Files under the workspace the program created or changed (relative paths). */
  changedFiles: string[];
  /** Files it wrote that were not kept because the per-call file budget ran out. */
  filesTruncated: boolean;
  /** What the model is told when status is not ok or error. */
  message?: string;
}

/** One sandbox implementation; the module picks one by `codeInterpreter.backend`. */
export interface SandboxBackend {
  readonly name: string;
  /** The resource boundary its containers get (`kernel`, `cpython`); none where the backend is its own (Pyodide's WASM). */
  readonly boundary?: SandboxBoundary;
  /** What the model is told of this sandbox in the tool's description: its packages, and whether variables persist. */
  readonly capabilities: string;
  run(request: SandboxRunRequest): Promise<SandboxRunResult>;
  /** The session's container is gone: drop whatever state it had (its processes and cgroup gone when the promise settles). */
  release(session: string): void | Promise<void>;
  /**
   * True when interpreter state is held outside this process, by a kernel host
   * every process reaches (`kernel.jupyterUrl`): a container taken over from a
   * home that stopped keeps its variables, and the backend itself says when not.
   */
  readonly sessionsOutliveHomes?: boolean;
  /**
   * Stops interpreter state held outside this process that no container owns
   * any more (`gone` answers from the records: expired, or no record): on a
   * shared kernel host, what a home that died before its containers expired
   * left running. Called by the store's periodic sweep.
   */
  reapOrphans?(gone: (session: string) => Promise<boolean>): Promise<void>;
  /** Start warm capacity (Pyodide) ahead of the first call. */
  warmUp?(): Promise<void>;
  close(): Promise<void>;
}

export const SANDBOX_BACKEND = Symbol('SANDBOX_BACKEND');
