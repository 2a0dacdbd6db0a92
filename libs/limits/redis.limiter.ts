import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { UnavailableError } from '#tool-sdk/errors.js';
import type { AdmissionCost, RequestLease, RequestLimiter } from '#core/loop/request-limiter.interface.js';
import type { Usage } from '#tool-sdk/items.js';
import { DAY_MS, dayOf, limitRefusal, reservationOf, tokenBudgetRefusal, windowOf, WINDOW_MS, type LimitKind } from './limit-refusal.js';
import type { LimitsSettings } from './limits.settings.js';

/**
 * Admission as one atomic step in Redis, so that replicas sharing it count
 * together. Running requests are members of a sorted set scored by their
 * lease's expiry: a gateway that dies without releasing stops renewing, and
 * its places free themselves when the lease lapses. The request's estimated
 * cost is checked against the token budgets and reserved in the same step,
 * so that two replicas admitting at once cannot both spend the same room.
 *
 * KEYS: running set, this minute's request counter, this minute's token counter, today's token counter.
 * ARGV: now, lease id, lease expiry, concurrency limit, rpm limit, tpm limit (0: none), window ms, tpd limit (0: none),
 *       estimate (tokens to reserve), day counter's lifetime ms.
 * Returns {0} when admitted, else {1} (concurrency), {2} (requests), {3, used} (tokens per minute), {4, used} (tokens per day).
 */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local concurrency = tonumber(ARGV[4])
if concurrency > 0 and redis.call('ZCARD', KEYS[1]) >= concurrency then return {1} end
local estimate = tonumber(ARGV[9])
local tpd = tonumber(ARGV[8])
local day = tonumber(redis.call('GET', KEYS[4]) or '0')
if tpd > 0 and (day >= tpd or (estimate > 0 and day + estimate > tpd)) then return {4, day} end
local tpm = tonumber(ARGV[6])
local minute = tonumber(redis.call('GET', KEYS[3]) or '0')
if tpm > 0 and (minute >= tpm or (estimate > 0 and minute + estimate > tpm)) then return {3, minute} end
local rpm = tonumber(ARGV[5])
if rpm > 0 then
  if tonumber(redis.call('GET', KEYS[2]) or '0') >= rpm then return {2} end
  redis.call('INCR', KEYS[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
end
if estimate > 0 and tpm > 0 then
  redis.call('INCRBY', KEYS[3], estimate)
  redis.call('PEXPIRE', KEYS[3], ARGV[7])
end
if estimate > 0 and tpd > 0 then
  redis.call('INCRBY', KEYS[4], estimate)
  redis.call('PEXPIRE', KEYS[4], ARGV[10])
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) - tonumber(ARGV[1]))
return {0}
`;

/** A running request's place is held this long without renewal. */
const DEFAULT_LEASE_MS = 60_000;
const REFUSAL: Record<number, LimitKind> = { 1: 'concurrency', 2: 'requests', 3: 'tokens', 4: 'tokens_per_day' };

export class RedisLimiter implements RequestLimiter {
  private readonly redis: Redis;
  /** Leases this process holds, renewed together. */
  private readonly held = new Map<string, string>();
  private readonly renewer: NodeJS.Timeout;
  /**
   * The newest release's write. One connection runs its commands in order, so once this
   * settles every earlier release has reached Redis too.
   */
  private lastWrite: Promise<unknown> = Promise.resolve();

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

  /**
   * Settles once every lease released so far is counted in Redis. A release does not wait for
   * its write (the answer is already out); another replica sees it only after this.
   */
  async flushed(): Promise<void> {
    await this.lastWrite;
  }

  async acquire(owner: string | null, cost?: AdmissionCost): Promise<RequestLease> {
    const now = Date.now();
    const { index, remainingMs } = windowOf(now);
    const day = dayOf(now);
    const keys = this.keys(owner, index, day.index);
    const id = randomUUID();
    const reserve = reservationOf(this.settings, cost);
    const { concurrentRequests, requestsPerMinute, tokensPerMinute, tokensPerDay } = this.settings;
    let outcome: [number, number?];
    try {
      outcome = await (this.redis as unknown as { switchyardAcquire(...args: Array<string | number>): Promise<[number, number?]> }).switchyardAcquire(
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
        reserve,
        DAY_MS * 2,
      );
    } catch (err) {
      throw new LimitsUnavailableError((err as Error).message);
    }
    const [code, used = 0] = outcome;
    const kind = REFUSAL[code];
    if (kind === 'tokens' || kind === 'tokens_per_day') {
      const limit = (kind === 'tokens' ? tokensPerMinute : tokensPerDay) as number;
      const resetMs = kind === 'tokens' ? remainingMs : day.remainingMs;
      throw tokenBudgetRefusal(kind, limit, used, reserve, resetMs) ?? limitRefusal(kind, limit, resetMs);
    }
    if (kind) throw limitRefusal(kind, (kind === 'concurrency' ? concurrentRequests : requestsPerMinute) as number, kind === 'concurrency' ? 1_000 : remainingMs);
    this.held.set(id, keys.running);
    let released = false;
    return {
      release: (usage: Usage | null) => {
        if (released) return;
        released = true;
        this.held.delete(id);
        const multi = this.redis.multi().zrem(keys.running, id);
        const tokens = usage?.total_tokens ?? 0;
        // Tokens count in the minute (and day) the request ended, when they are known. The
        // reservation is taken back where it still counts: in the same minute (day) it was made.
        const at = Date.now();
        const ended = this.keys(owner, windowOf(at).index, dayOf(at).index);
        const settle = (key: string, reservedKey: string, ttl: number) => {
          const delta = tokens - (key === reservedKey ? reserve : 0);
          if (delta !== 0) multi.incrby(key, delta).pexpire(key, ttl);
        };
        if (tokensPerMinute !== null) settle(ended.tokens, keys.tokens, WINDOW_MS * 2);
        if (tokensPerDay !== null) settle(ended.dayTokens, keys.dayTokens, DAY_MS * 2);
        this.lastWrite = multi.exec().catch(() => undefined);
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
        const own = (key: string, reservedKey: string) => (key === reservedKey ? reserve : 0);
        if (tokensPerDay !== null && Number(counts[1] ?? 0) - own(current.dayTokens, keys.dayTokens) + tokens >= tokensPerDay) {
          throw limitRefusal('tokens_per_day', tokensPerDay, today.remainingMs);
        }
        if (tokensPerMinute !== null && Number(counts[0] ?? 0) - own(current.tokens, keys.tokens) + tokens >= tokensPerMinute) {
          throw limitRefusal('tokens', tokensPerMinute, window.remainingMs);
        }
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
