import type { ChildService } from './child-service.js';

/** Knobs for one run; `--quick` shrinks them all for a smoke test. */
export interface BenchSettings {
  rounds: number;
  latencyRequests: number;
  latencyWarmup: number;
  latencyMs: number;
  throughputWarmup: number;
  throughputMs: number;
  relayRequests: number;
  schedulerRepeats: number;
  streams: number;
  holdMs: number;
  soakSeconds: number;
  sampleEveryMs: number;
  /** Node flags for gateway children (`--cpu-prof`...). */
  gatewayExecArgv: string[];
}

export interface BenchContext {
  sim: ChildService;
  proxy: ChildService;
  gateway: ChildService;
  /** A second gateway with `server.sseWrites: "tick"`, for the relay comparison. */
  gatewayTick?: ChildService;
  settings: BenchSettings;
  log(line: string): void;
}
