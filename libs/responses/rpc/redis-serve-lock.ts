import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';

const TTL_MS = 6000;
const REFRESH_MS = 1000;
const POLL_MS = 200;
// Extends the lease only while it is still ours: a lease that expired and was taken stays taken.
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * The name (`CLIENT SETNAME`) of a gateway's Redis connections: `switchyard:<role>:<pattern>`, so
 * that `CLIENT LIST` tells which gateway, and which part of it, holds a connection. Redis refuses
 * names with spaces or characters outside printable ASCII, so those become `_`.
 */
export function redisConnectionName(role: 'lease' | 'rpc', pattern: string): string {
  return `switchyard:${role}:${pattern}`.replace(/[^!-~]/g, '_');
}

/** A second gateway on the same Redis patterns, whose holder is alive: refused at boot. */
export class RedisPatternsTakenError extends Error {
  override readonly name = 'RedisPatternsTakenError';
  readonly code = 'redis_patterns_taken';
}

/**
 * Redis pub/sub delivers every message to every subscriber, so two gateways
 * on the same Redis patterns would each run every request. One gateway per
 * pattern set holds this lease (a key refreshed every `REFRESH_MS` while it
 * lives, gone `TTL_MS` after it dies).
 *
 * A gateway that finds it held watches the key for one refresh: a holder
 * that refreshes is alive, and the newcomer refuses at once (or, with
 * `waitMs`, waits that long for it as a standby: a draining holder gives the
 * lease up). A holder that does not refresh is dead, and the newcomer takes
 * the lease once it lapses, so a restart right after a crash still starts.
 */
export class RedisServeLock {
  private readonly token = randomUUID();
  private timer?: NodeJS.Timeout;
  private released = false;

  private constructor(
    private readonly redis: Redis,
    private readonly key: string,
  ) {}

  static async acquire(redisUrl: string, pattern: string, options: { waitMs?: number } = {}): Promise<RedisServeLock> {
    // Loaded only here: ioredis is an optional peer of the package, needed only with REDIS_URL.
    const { Redis } = await import('ioredis');
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectionName: redisConnectionName('lease', pattern) });
    const lock = new RedisServeLock(redis, `switchyard:serving:${pattern}`);
    try {
      // Inside the try: a failed first connect leaves ioredis reconnecting in the background, which keeps the process alive.
      await redis.connect();
      await lock.take(pattern, options.waitMs ?? 0);
    } catch (err) {
      redis.disconnect();
      throw err;
    }
    lock.timer = setInterval(() => void redis.eval(EXTEND, 1, lock.key, lock.token, String(TTL_MS)).catch(() => undefined), REFRESH_MS);
    lock.timer.unref();
    return lock;
  }

  private async take(pattern: string, waitMs: number): Promise<void> {
    const started = Date.now();
    let lastTtl: number | undefined;
    let holderAlive = false;
    let standing = false;
    while ((await this.redis.set(this.key, this.token, 'PX', TTL_MS, 'NX')) !== 'OK') {
      const ttl = await this.redis.pttl(this.key);
      // The remaining time went up: the holder refreshed it since the last look, so it is alive.
      if (lastTtl !== undefined && ttl > lastTtl) holderAlive = true;
      lastTtl = ttl;
      const waited = Date.now() - started;
      if (holderAlive && !standing && waitMs > 0) {
        standing = true;
        new Logger('Transports').log(`standing by: another gateway holds the Redis lease on '${pattern}'; serving once it gives it up (REDIS_LEASE_WAIT_MS ${waitMs})`);
      }
      // A live holder: refused once the wait is over. A silent one lapses within TTL_MS; past that, someone keeps taking it.
      if ((holderAlive && waited >= waitMs) || waited > waitMs + TTL_MS + REFRESH_MS) {
        throw new RedisPatternsTakenError(
          `the Redis broker is reachable, but another live gateway holds the lease on '${pattern}' (key ${this.key})${waitMs > 0 ? ` and kept it for ${waitMs} ms` : ''}: Redis pub/sub would give every request to both, running it twice. Give each gateway its own TRANSPORT_PATTERN_PREFIX, use NATS (NATS_URL), whose queue group shares the work between gateways, or set REDIS_LEASE_WAIT_MS to wait for the lease as a standby (a draining gateway gives it up).`,
        );
      }
      await sleep(POLL_MS);
    }
  }

  /** Gives the lease up (once): on close, or when the drain begins so that a waiting gateway takes over. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    await this.redis.eval(RELEASE, 1, this.key, this.token).catch(() => undefined);
    this.redis.disconnect();
  }
}
