import { Global, Inject, Module, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/gateway-config.js';
import { REQUEST_LIMITER, type RequestLimiter } from '../core/loop/request-limiter.interface.js';
import { readLimitsSettings } from './limits.settings.js';
import { MemoryLimiter } from './memory.limiter.js';
import { RedisLimiter } from './redis.limiter.js';

/** The configured limiter, or null when no limit is set (then the loop counts nothing). */
export function createLimiter(config: GatewayConfig): RequestLimiter | null {
  const settings = readLimitsSettings(config);
  if (!settings) return null;
  return settings.redisUrl ? new RedisLimiter(settings) : new MemoryLimiter(settings);
}

/**
 * Per-owner limits (`limits.*`): concurrent requests, requests and tokens per
 * minute, enforced where every surface meets, the loop, so HTTP, WebSocket,
 * the Messages API and background runs all count. Global so that core finds
 * `REQUEST_LIMITER` by token.
 */
@Global()
@Module({
  providers: [{ provide: REQUEST_LIMITER, inject: [GATEWAY_CONFIG], useFactory: createLimiter }],
  exports: [REQUEST_LIMITER],
})
export class LimitsModule implements OnModuleInit, OnApplicationShutdown {
  constructor(@Optional() @Inject(REQUEST_LIMITER) private readonly limiter: RequestLimiter | null) {}

  /** A Redis that cannot be reached at boot stops the boot, naming the setting. */
  async onModuleInit(): Promise<void> {
    if (!(this.limiter instanceof RedisLimiter)) return;
    try {
      await this.limiter.connect();
    } catch (err) {
      throw new Error(`Could not connect to Redis for limits.redisUrl (LIMITS_REDIS_URL): ${(err as Error).message}`, { cause: err });
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.limiter instanceof RedisLimiter) await this.limiter.close();
  }
}
