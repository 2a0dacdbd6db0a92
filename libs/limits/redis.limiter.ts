import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { UnavailableError } from '#tool-sdk/errors.js';
import type { RequestLease, RequestLimiter } from '#core/loop/request-limiter.interface.js';
import type { Usage } from '#tool-sdk/items.js';
import { DAY_MS, dayOf, limitRefusal, windowOf, WINDOW_MS, type LimitKind } from './limit-refusal.js';
import type { LimitsSettings } from './limits.settings.js';

/**
 * Admission as one atomic step in Redis, so that replicas sharing it count
 * together. Running requests are members of a sorted set scored by their
 * lease's expiry: a gateway that dies without releasing stops renewing, and
 * its places free themselves when the lease lapses.
 *
 * KEYS: running set, this minute's request counter, this minute's token counter, today's token counter.
 * ARGV: now, lease id, lease expiry, concurrency limit, rpm limit, tpm limit (0: none), window ms, tpd limit (0: none).
 * Returns 0 when admitted, else 1 (concurrency), 2 (requests), 3 (tokens per minute), 4 (tokens per day).
 */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local concurrency = tonumber(ARGV[4])
if concurrency > 0 and redis.call('ZCARD', KEYS[1]) >= concurrency then return 1 end
local tpd = tonumber(ARGV[8])
if tpd > 0 and tonumber(redis.call('GET', KEYS[4]) or '0') >= tpd then return 4 end
local tpm = tonumber(ARGV[6])
if tpm > 0 and tonumber(redis.call('GET', KEYS[3]) or '0') >= tpm then return 3 end
local rpm = tonumber(ARGV[5])
if rpm > 0 then
  if tonumber(redis.call('GET', KEYS[2]) or '0') >= rpm then return 2 end
  redis.call('INCR', KEYS[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) - tonumber(ARGV[1]))
return 0
`;

/** A running request's place is held this long without renewal. */
const DEFAULT_LEASE_MS = 60_000;
const REFUSAL: Record<number, LimitKind> = { 1: 'concurrency', 2: 'requests', 3: 'tokens', 4: 'tokens_per_day' };

export class RedisLimiter implements RequestLimiter {
  private readonly redis: Redis;
  /** Leases this process holds, renewed together. */
  private readonly held = new Map<string, string>();
  private readonly renewer: NodeJS.Timeout;

  private readonly leaseMs: number;

  constructor(
    private readonly settings: LimitsSettings,
    options: { redis?: Redis; leaseMs?: number } = {},
  ) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    const redis = options.redis;
    this.redis =
      redis ??
      new Redis(settings.redisUrl as string, {
        // Fail a request fast rather than queue it behind a Redis that is down.
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        connectTimeout: 2_000,
        lazyConnect: true,
        // close() reaches disconnect() only when QUIT could not be sent: the link is down.
        // ioredis then arms a timer (2 s by default) to destroy the socket, and when that
        // socket had already failed nothing clears it: a gateway whose Redis was
        // unreachable would hold its exit that long. There is nothing left to flush.
        disconnectTimeout: 0,
      });
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('switchyardAcquire', { numberOfKeys: 4, lua: ACQUIRE });
    this.renewer = setInterval(() => void this.renew(), this.leaseMs / 3);
    this.renewer.unref();
  }

  async connect(): Promise<void> {
    if (this.redis.status === 'wait') await this.redis.connect();
  }

  async close(): Promise<void> {
    clearInterval(this.renewer);
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  async acquire(owner: string | null): Promise<RequestLease> {
    const now = Date.now();
    const { index, remainingMs } = windowOf(now);
    const day = dayOf(now);
    const keys = this.keys(owner, index, day.index);
    const id = randomUUID();
    const { concurrentRequests, requestsPerMinute, tokensPerMinute, tokensPerDay } = this.settings;
    let outcome: number;
    try {
      outcome = (await (this.redis as unknown as { switchyardAcquire(...args: Array<string | number>): Promise<number> }).switchyardAcquire(
        keys.running,
        keys.requests,
        keys.tokens,
        keys.dayTokens,
        now,
        id,
        now + this.leaseMs,
        concurrentRequests ?? 0,
        requestsPerMinute ?? 0,
        tokensPerMinute ?? 0,
        WINDOW_MS * 2,
        tokensPerDay ?? 0,
      )) as number;
    } catch (err) {
      throw new LimitsUnavailableError((err as Error).message);
    }
    const kind = REFUSAL[outcome];
    if (kind) {
      const limit = { concurrency: concurrentRequests, requests: requestsPerMinute, tokens: tokensPerMinute, tokens_per_day: tokensPerDay }[kind];
      throw limitRefusal(kind, limit as number, kind === 'concurrency' ? 1_000 : kind === 'tokens_per_day' ? day.remainingMs : remainingMs);
    }
    this.held.set(id, keys.running);
    let released = false;
    return {
      release: (usage: Usage | null) => {
        if (released) return;
        released = true;
        this.held.delete(id);
        const multi = this.redis.multi().zrem(keys.running, id);
        const tokens = usage?.total_tokens ?? 0;
        // Tokens count in the minute (and day) the request ended, when they are known.
        const at = Date.now();
        const ended = this.keys(owner, windowOf(at).index, dayOf(at).index);
        if (tokensPerMinute !== null && tokens > 0) multi.incrby(ended.tokens, tokens).pexpire(ended.tokens, WINDOW_MS * 2);
        if (tokensPerDay !== null && tokens > 0) multi.incrby(ended.dayTokens, tokens).pexpire(ended.dayTokens, DAY_MS * 2);
        multi.exec().catch(() => undefined);
      },
      check: async (spent: Usage) => {
        if (released || (tokensPerMinute === null && tokensPerDay === null)) return;
        const at = Date.now();
        const window = windowOf(at);
        const today = dayOf(at);
        const current = this.keys(owner, window.index, today.index);
        let counts: Array<string | null>;
        try {
          counts = await this.redis.mget(current.tokens, current.dayTokens);
        } catch (err) {
          throw new LimitsUnavailableError((err as Error).message);
        }
        const tokens = spent.total_tokens ?? 0;
        if (tokensPerDay !== null && Number(counts[1] ?? 0) + tokens >= tokensPerDay) throw limitRefusal('tokens_per_day', tokensPerDay, today.remainingMs);
        if (tokensPerMinute !== null && Number(counts[0] ?? 0) + tokens >= tokensPerMinute) throw limitRefusal('tokens', tokensPerMinute, window.remainingMs);
      },
    };
  }

  private keys(owner: string | null, window: number, day: number): { running: string; requests: string; tokens: string; dayTokens: string } {
    const base = `${this.settings.keyPrefix}${owner ?? 'anonymous'}`;
    return { running: `${base}:running`, requests: `${base}:rpm:${window}`, tokens: `${base}:tpm:${window}`, dayTokens: `${base}:tpd:${day}` };
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const until = Date.now() + this.leaseMs;
    const multi = this.redis.multi();
    for (const [id, key] of this.held) multi.zadd(key, 'XX', until, id).pexpire(key, this.leaseMs);
    await multi.exec().catch(() => undefined);
  }
}

/** Redis did not answer: refusing is safer than admitting without limits. */
export class LimitsUnavailableError extends UnavailableError {
  constructor(detail: string) {
    super(`The rate-limit store is unavailable (${detail}); try again shortly.`, 'limits_unavailable', 1);
  }
}
