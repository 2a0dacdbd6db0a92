import type { RequestLease, RequestLimiter } from '#core/loop/request-limiter.interface.js';
import type { Usage } from '#tool-sdk/items.js';
import { dayOf, limitRefusal, windowOf } from './limit-refusal.js';
import type { LimitsSettings } from './limits.settings.js';

interface OwnerCounts {
  active: number;
  window: number;
  requests: number;
  tokens: number;
  day: number;
  dayTokens: number;
}

/**
 * Limits counted in this process: right for one gateway, or as a floor per
 * replica. Token budgets are checked at admission against what the owner has
 * already spent (a request past a spent budget never reaches the upstream)
 * and charged when the run ends, when its cost is known.
 */
export class MemoryLimiter implements RequestLimiter {
  private readonly owners = new Map<string, OwnerCounts>();

  constructor(
    private readonly settings: LimitsSettings,
    private readonly now: () => number = Date.now,
  ) {}

  async acquire(owner: string | null): Promise<RequestLease> {
    const now = this.now();
    const { index, remainingMs } = windowOf(now);
    const day = dayOf(now);
    const key = owner ?? '';
    let counts = this.owners.get(key);
    if (!counts) {
      counts = { active: 0, window: index, requests: 0, tokens: 0, day: day.index, dayTokens: 0 };
      this.owners.set(key, counts);
    }
    roll(counts, index, day.index);
    const { concurrentRequests, requestsPerMinute, tokensPerMinute, tokensPerDay } = this.settings;
    if (concurrentRequests !== null && counts.active >= concurrentRequests) throw limitRefusal('concurrency', concurrentRequests, 1_000);
    if (tokensPerDay !== null && counts.dayTokens >= tokensPerDay) throw limitRefusal('tokens_per_day', tokensPerDay, day.remainingMs);
    if (tokensPerMinute !== null && counts.tokens >= tokensPerMinute) throw limitRefusal('tokens', tokensPerMinute, remainingMs);
    if (requestsPerMinute !== null && counts.requests >= requestsPerMinute) throw limitRefusal('requests', requestsPerMinute, remainingMs);
    counts.active++;
    counts.requests++;
    let released = false;
    const held = counts;
    return {
      release: (usage: Usage | null) => {
        if (released) return;
        released = true;
        held.active--;
        // Tokens count in the minute (and day) the request ended, when they are known.
        const at = this.now();
        roll(held, windowOf(at).index, dayOf(at).index);
        const tokens = usage?.total_tokens ?? 0;
        held.tokens += tokens;
        held.dayTokens += tokens;
        if (held.active === 0 && held.requests === 0 && held.dayTokens === 0) this.owners.delete(key);
      },
      check: async (spent: Usage) => {
        if (released) return;
        const at = this.now();
        const window = windowOf(at);
        const today = dayOf(at);
        roll(held, window.index, today.index);
        const tokens = spent.total_tokens ?? 0;
        if (tokensPerDay !== null && held.dayTokens + tokens >= tokensPerDay) throw limitRefusal('tokens_per_day', tokensPerDay, today.remainingMs);
        if (tokensPerMinute !== null && held.tokens + tokens >= tokensPerMinute) throw limitRefusal('tokens', tokensPerMinute, window.remainingMs);
      },
    };
  }
}

/** Starts a new minute's (and day's) counts once the clock has moved past the held ones. */
function roll(counts: OwnerCounts, window: number, day: number): void {
  if (counts.window !== window) Object.assign(counts, { window, requests: 0, tokens: 0 });
  if (counts.day !== day) Object.assign(counts, { day, dayTokens: 0 });
}
