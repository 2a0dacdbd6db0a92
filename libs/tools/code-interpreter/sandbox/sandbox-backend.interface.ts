/** How one program ended. `timeout`, `memory` and `crashed` also recycle the sandbox. */
export type SandboxStatus = 'ok' | 'error' | 'timeout' | 'memory' | 'crashed' | 'aborted';

export interface SandboxLimits {
  timeoutMs: number;
  graceMs: number;
  memoryLimitMb: number;
  maxOutputBytes: number;
  maxFileBytes: number;
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
  run(request: SandboxRunRequest): Promise<SandboxRunResult>;
  /** The session's container is gone: drop whatever state it had. */
  release(session: string): void;
  /** Start warm capacity (Pyodide) ahead of the first call. */
  warmUp?(): Promise<void>;
  close(): Promise<void>;
}

export const SANDBOX_BACKEND = Symbol('SANDBOX_BACKEND');
