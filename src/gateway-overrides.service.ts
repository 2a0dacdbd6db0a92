import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { assertImplements, closeOverride } from '#core/overrides/gateway-override.js';

/** One host override the gateway module checks at init (and maybe closes at shutdown). */
export interface OverrideCheck {
  token: symbol;
  name: string;
  methods: readonly string[];
  /** Whether this module closes it (the upstream and storage modules close theirs). */
  close: boolean;
}

export const OVERRIDE_CHECKS = Symbol('OVERRIDE_CHECKS');

/**
 * Refuses at init, before the app listens, an override that is not the port
 * it replaces; closes at shutdown, once, the ones with `close()` and no Nest
 * hooks of their own.
 */
@Injectable()
export class GatewayOverrides implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(OVERRIDE_CHECKS) private readonly checks: OverrideCheck[],
  ) {}

  onModuleInit(): void {
    for (const check of this.checks) assertImplements(this.moduleRef.get(check.token, { strict: true }), check.name, check.methods);
  }

  async onApplicationShutdown(): Promise<void> {
    for (const check of this.checks) if (check.close) await closeOverride(this.moduleRef.get(check.token, { strict: true }));
  }
}
