import { Global, Inject, Module, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { registerConfigSection } from '#config/config-section.js';
import { REQUEST_LIMITER, type RequestLimiter } from '#core/loop/request-limiter.interface.js';
import { LIMITS_SETTINGS, type LimitsSettings, limitsConfigSection } from './limits.settings.js';
import { MemoryLimiter } from './memory.limiter.js';
import { LIMITS_SERVICE, PrimaryLimiter } from './primary.limiter.js';
import { primaryOffers } from '#core/cluster/primary-channel.js';
import type { RedisLimiter } from './redis.limiter.js';

/**
 * The configured limiter, or null when no limit is set (then the loop counts
 * nothing). The Redis one is loaded only when `limits.redisUrl` is set:
 * `ioredis` is an optional peer dependency of the package. Without Redis, a
 * worker of worker mode asks the primary, which counts for all workers; a
 * single process counts in its own memory.
 */
export async function createLimiter(settings: LimitsSettings | null): Promise<RequestLimiter | null> {
  if (!settings) return null;
  if (!settings.redisUrl) return primaryOffers(LIMITS_SERVICE) ? new PrimaryLimiter() : new MemoryLimiter(settings);
  const { RedisLimiter } = await import('./redis.limiter.js').catch((e: unknown) => {
    if ((e as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String((e as Error).message).includes("'ioredis'")) {
      throw new Error('limits.redisUrl (LIMITS_REDIS_URL) needs the package ioredis, an optional peer dependency: npm install ioredis', { cause: e });
    }
    throw e;
  });
  return new RedisLimiter(settings);
}

function isRedisLimiter(limiter: RequestLimiter | null): limiter is RedisLimiter {
  return !!limiter && typeof (limiter as Partial<RedisLimiter>).connect === 'function';
}

/**
 * Per-owner limits (`limits.*`): concurrent requests, requests and tokens per
 * minute, enforced where every surface meets, the loop, so HTTP, WebSocket,
 * the Messages API and background runs all count. Global so that core finds
 * `REQUEST_LIMITER` by token.
 */
@Global()
@Module({
  providers: [registerConfigSection(limitsConfigSection), { provide: REQUEST_LIMITER, inject: [LIMITS_SETTINGS], useFactory: createLimiter }],
  exports: [REQUEST_LIMITER],
})
export class LimitsModule implements OnModuleInit, OnApplicationShutdown {
  constructor(@Optional() @Inject(REQUEST_LIMITER) private readonly limiter: RequestLimiter | null) {}

  /** A Redis that cannot be reached at boot stops the boot, naming the setting. */
  async onModuleInit(): Promise<void> {
    if (!isRedisLimiter(this.limiter)) return;
    try {
      await this.limiter.connect();
    } catch (err) {
      throw new Error(`Could not connect to Redis for limits.redisUrl (LIMITS_REDIS_URL): ${(err as Error).message}`, { cause: err });
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (isRedisLimiter(this.limiter)) await this.limiter.close();
  }
}
