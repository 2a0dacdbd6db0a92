import { performance } from 'node:perf_hooks';
import type { RunTimeline, TimelineRound, TimelineToolCall } from '#storage/usage-store.interface.js';

/** Milliseconds with one decimal: enough for a timeline, short in the stored JSON. */
const ms = (value: number): number => Math.round(value * 10) / 10;

/**
 * Collects what the console's run view draws, as the run goes: each round
 * (and its upstream call), each gateway tool call and each tool discovery,
 * with start offsets from the run's beginning, durations and outcomes. Only
 * names, times and outcomes: never arguments or outputs.
 */
export class RunTimelineBuilder {
  private readonly startedAt = Date.now();
  private readonly origin = performance.now();
  private readonly rounds: TimelineRound[] = [];
  private readonly tools: TimelineToolCall[] = [];

  private now(): number {
    return performance.now() - this.origin;
  }

  /** A round begins; the handle ends it and its upstream call. */
  round(round: number): { upstream(): (error?: string) => void; end(): void } {
    const entry: TimelineRound = { round, startMs: ms(this.now()), durationMs: 0 };
    this.rounds.push(entry);
    return {
      upstream: () => {
        const from = this.now();
        return (error?: string) => {
          entry.upstreamMs = ms(this.now() - from);
          if (error) entry.error = error;
        };
      },
      end: () => {
        entry.durationMs = ms(this.now() - entry.startMs);
      },
    };
  }

  /** A tool call or discovery begins; the returned function ends it with its outcome. */
  tool(call: Omit<TimelineToolCall, 'startMs' | 'durationMs' | 'outcome'>): (outcome: string, error?: string) => void {
    const startMs = this.now();
    return (outcome, error) => {
      this.tools.push({ ...call, startMs: ms(startMs), durationMs: ms(this.now() - startMs), outcome, ...(error ? { error } : {}) });
    };
  }

  build(run: Pick<RunTimeline, 'responseId' | 'owner' | 'model' | 'surface' | 'status' | 'error'>): RunTimeline {
    const tools = [...this.tools].sort((a, b) => a.startMs - b.startMs);
    return { ...run, startedAt: this.startedAt, durationMs: ms(this.now()), rounds: this.rounds, tools };
  }
}
