import type { AdmissionCost, RequestLease, RequestLimiter } from '#core/loop/request-limiter.interface.js';
import type { Usage } from '#tool-sdk/items.js';
import { dayOf, limitRefusal, reservationOf, tokenBudgetRefusal, windowOf } from './limit-refusal.js';
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
 * already spent plus the request's own estimate (a request past the budget
 * never reaches the upstream); the estimate is reserved in the minute and day
 * of admission and settled to the actual usage when the run ends.
 */
export class MemoryLimiter implements RequestLimiter {
  private readonly owners = new Map<string, OwnerCounts>();

  constructor(
    private readonly settings: LimitsSettings,
    private readonly now: () => number = Date.now,
  ) {}

  async acquire(owner: string | null, cost?: AdmissionCost): Promise<RequestLease> {
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
    const reserve = reservationOf(this.settings, cost);
    if (concurrentRequests !== null && counts.active >= concurrentRequests) throw limitRefusal('concurrency', concurrentRequests, 1_000);
    const refusal =
      tokenBudgetRefusal('tokens_per_day', tokensPerDay, counts.dayTokens, reserve, day.remainingMs) ??
      tokenBudgetRefusal('tokens', tokensPerMinute, counts.tokens, reserve, remainingMs);
    if (refusal) throw refusal;
    if (requestsPerMinute !== null && counts.requests >= requestsPerMinute) throw limitRefusal('requests', requestsPerMinute, remainingMs);
    counts.active++;
    counts.requests++;
    counts.tokens += reserve;
    counts.dayTokens += reserve;
    let released = false;
    const held = counts;
    // What of the reservation is still in the counts: none once its minute (or day) has rolled over.
    const reserved = (at: number) => ({ minute: windowOf(at).index === index ? reserve : 0, day: dayOf(at).index === day.index ? reserve : 0 });
    return {
      release: (usage: Usage | null) => {
        if (released) return;
        released = true;
        held.active--;
        // Tokens count in the minute (and day) the request ended, when they are known; the reservation made at admission is taken back.
        const at = this.now();
        roll(held, windowOf(at).index, dayOf(at).index);
        const back = reserved(at);
        const tokens = usage?.total_tokens ?? 0;
        held.tokens += tokens - back.minute;
        held.dayTokens += tokens - back.day;
        if (held.active === 0 && held.requests === 0 && held.dayTokens === 0) this.owners.delete(key);
      },
      check: async (spent: Usage) => {
        if (released) return;
        const at = this.now();
        const window = windowOf(at);
        const today = dayOf(at);
        roll(held, window.index, today.index);
        const back = reserved(at);
        const tokens = spent.total_tokens ?? 0;
        if (tokensPerDay !== null && held.dayTokens - back.day + tokens >= tokensPerDay) throw limitRefusal('tokens_per_day', tokensPerDay, today.remainingMs);
        if (tokensPerMinute !== null && held.tokens - back.minute + tokens >= tokensPerMinute) throw limitRefusal('tokens', tokensPerMinute, window.remainingMs);
      },
    };
  }
}

/** Starts a new minute's (and day's) counts once the clock has moved past the held ones. */
function roll(counts: OwnerCounts, window: number, day: number): void {
  if (counts.window !== window) Object.assign(counts, { window, requests: 0, tokens: 0 });
  if (counts.day !== day) Object.assign(counts, { day, dayTokens: 0 });
}
