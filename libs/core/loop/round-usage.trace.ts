import { addUsage, emptyUsage, type Usage } from '#tool-sdk/items.js';
import type { GatewayCall } from '#tool-sdk/contract/index.js';
import type { ResponseStreamEvent } from './response-events.js';
import type { RoundTrace, RunTrace, ToolCallTrace } from './run-observer.interface.js';

/**
 * The run's trace, with each round's usage also summed into `spent` as the
 * round's answer completes. The run's state only takes a round's usage in
 * once the round's tool calls are done, so a run cancelled while a tool runs
 * would otherwise release its budget lease as if the finished round had cost
 * nothing, while the usage store and the metrics (which read the rounds)
 * charged it. Without an observer the rounds are not traced, and the state's
 * usage is all the budget hears.
 */
export function withRoundUsage(trace: RunTrace | undefined, spent: ((usage: Usage) => void) | undefined): RunTrace | undefined {
  return trace && spent ? new RoundUsageTrace(trace, spent) : trace;
}

class RoundUsageTrace implements RunTrace {
  private total = emptyUsage();
  readonly discovery?: RunTrace['discovery'];

  constructor(
    private readonly inner: RunTrace,
    private readonly spent: (usage: Usage) => void,
  ) {
    if (inner.discovery) this.discovery = (toolType, declaration) => inner.discovery!(toolType, declaration);
  }

  event(event: ResponseStreamEvent): void {
    this.inner.event(event);
  }

  round(round: number): RoundTrace {
    return new CountedRound(this.inner.round(round), (usage) => {
      this.total = addUsage(addUsage(emptyUsage(), this.total), usage);
      this.spent(this.total);
    });
  }

  toolCall(call: GatewayCall, toolType: string, round?: RoundTrace): ToolCallTrace {
    // The observer parents a call under its own round object.
    return this.inner.toolCall(call, toolType, round instanceof CountedRound ? round.inner : round);
  }

  end(outcome: { error?: unknown; cancelled?: boolean }): void {
    this.inner.end(outcome);
  }
}

class CountedRound implements RoundTrace {
  constructor(
    readonly inner: RoundTrace,
    private readonly counted: (usage: Usage) => void,
  ) {}

  upstream() {
    return this.inner.upstream();
  }

  usage(usage: Usage | null): void {
    this.inner.usage?.(usage);
    if (usage) this.counted(usage);
  }

  end(): void {
    this.inner.end();
  }
}
