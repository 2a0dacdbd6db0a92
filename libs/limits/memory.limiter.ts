import type { RequestLease, RequestLimiter } from '#core/loop/request-limiter.interface.js';
import type { Usage } from '#tool-sdk/items.js';
import { limitRefusal, windowOf } from './limit-refusal.js';
import type { LimitsSettings } from './limits.settings.js';

interface OwnerCounts {
  active: number;
  window: number;
  requests: number;
  tokens: number;
}

/** Limits counted in this process: right for one gateway, or as a floor per replica. */
export class MemoryLimiter implements RequestLimiter {
  private readonly owners = new Map<string, OwnerCounts>();

  constructor(
    private readonly settings: LimitsSettings,
    private readonly now: () => number = Date.now,
  ) {}

  async acquire(owner: string | null): Promise<RequestLease> {
    const { index, remainingMs } = windowOf(this.now());
    const key = owner ?? '';
    let counts = this.owners.get(key);
    if (!counts) {
      counts = { active: 0, window: index, requests: 0, tokens: 0 };
      this.owners.set(key, counts);
    }
    if (counts.window !== index) Object.assign(counts, { window: index, requests: 0, tokens: 0 });
    const { concurrentRequests, requestsPerMinute, tokensPerMinute } = this.settings;
    if (concurrentRequests !== null && counts.active >= concurrentRequests) throw limitRefusal('concurrency', concurrentRequests, 1_000);
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
        // Tokens count in the minute the request ended, when they are known.
        const now = windowOf(this.now()).index;
        if (held.window !== now) Object.assign(held, { window: now, requests: 0, tokens: 0 });
        held.tokens += usage?.total_tokens ?? 0;
        if (held.active === 0 && held.requests === 0 && held.tokens === 0) this.owners.delete(key);
      },
    };
  }
}
