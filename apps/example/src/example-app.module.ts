import { type DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { DEFAULT_UPSTREAM_CLIENT, type GatewayConfig, GatewayModule, type UpstreamClient } from 'switchyard-gateway';
import { GatewayMicroserviceModule } from 'switchyard-gateway/microservice';
import { DenyListGuard } from './deny-list.guard.js';
import { DiceToolModule } from './dice.tool-module.js';
import { TenantHeaderUpstreamClient } from './tenant-header.upstream-client.js';
import { TimingInterceptor } from './timing.interceptor.js';

export const EXAMPLE_TENANT = 'example-tenant';

/**
 * A host application around the gateway: its own tool type, its own upstream
 * wrapper, a global guard and interceptor, and the Responses patterns on
 * whatever broker the config names (under its `transports.patternPrefix`).
 */
@Module({})
export class ExampleAppModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: ExampleAppModule,
      imports: [
        GatewayModule.forRoot({
          config,
          imports: [DiceToolModule, GatewayMicroserviceModule.forRoot()],
          upstream: {
            inject: [DEFAULT_UPSTREAM_CLIENT],
            useFactory: (configured: UpstreamClient) => new TenantHeaderUpstreamClient(configured, EXAMPLE_TENANT),
          },
        }),
      ],
      providers: [
        { provide: APP_GUARD, useClass: DenyListGuard },
        { provide: APP_INTERCEPTOR, useClass: TimingInterceptor },
      ],
    };
  }
}
