import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { closeOverride } from './gateway-overrides.js';

/** Tokens of overrides the gateway module itself must close (the upstream and storage modules close theirs). */
export const OVERRIDES_TO_CLOSE = Symbol('OVERRIDES_TO_CLOSE');

/** Closes host-supplied ports at application shutdown, once, unless they close themselves through Nest hooks. */
@Injectable()
export class GatewayShutdown implements OnApplicationShutdown {
  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(OVERRIDES_TO_CLOSE) private readonly tokens: symbol[],
  ) {}

  async onApplicationShutdown(): Promise<void> {
    for (const token of this.tokens) await closeOverride(this.moduleRef.get(token, { strict: true }));
  }
}
