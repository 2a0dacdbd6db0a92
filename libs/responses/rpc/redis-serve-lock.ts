import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';

const TTL_MS = 6000;
const REFRESH_MS = 2000;
// Extends the lease only while it is still ours: a lease that expired and was taken stays taken.
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/** A second gateway on the same Redis patterns: refused at boot. */
export class RedisPatternsTakenError extends Error {}

/**
 * Redis pub/sub delivers every message to every subscriber, so two gateways
 * on the same Redis patterns would each run every request. One gateway per
 * pattern set holds this lease (a key refreshed while it lives, gone
 * `TTL_MS` after it dies); another that finds it held refuses to start. A
 * gateway restarted right after a crash waits out the dead one's lease.
 */
export class RedisServeLock {
  private readonly token = randomUUID();
  private timer?: NodeJS.Timeout;

  private constructor(
    private readonly redis: Redis,
    private readonly key: string,
  ) {}

  static async acquire(redisUrl: string, pattern: string): Promise<RedisServeLock> {
    // Loaded only here: ioredis is an optional peer of the package, needed only with REDIS_URL.
    const { Redis } = await import('ioredis');
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    await redis.connect();
    const lock = new RedisServeLock(redis, `switchyard:serving:${pattern}`);
    try {
      const deadline = Date.now() + TTL_MS + 1000;
      while ((await redis.set(lock.key, lock.token, 'PX', TTL_MS, 'NX')) !== 'OK') {
        if (Date.now() > deadline) {
          throw new RedisPatternsTakenError(
            `another gateway already serves '${pattern}' on this Redis (pub/sub would give every request to both, running it twice). Give each gateway its own TRANSPORT_PATTERN_PREFIX, or use NATS (NATS_URL), whose queue group shares the work between gateways.`,
          );
        }
        await sleep(500);
      }
    } catch (err) {
      redis.disconnect();
      throw err;
    }
    lock.timer = setInterval(() => void redis.eval(EXTEND, 1, lock.key, lock.token, String(TTL_MS)).catch(() => undefined), REFRESH_MS);
    lock.timer.unref();
    return lock;
  }

  async release(): Promise<void> {
    clearInterval(this.timer);
    await this.redis.eval(RELEASE, 1, this.key, this.token).catch(() => undefined);
    this.redis.disconnect();
  }
}
