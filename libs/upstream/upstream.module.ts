import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/gateway-config.js';
import { createUpstreamClient } from './upstream-client.factory.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from './upstream-client.interface.js';

/**
 * Provides `UPSTREAM_CLIENT` for the configured dialect. `GATEWAY_CONFIG`
 * must be visible here, i.e. provided by a global config module.
 */
@Module({
  providers: [
    {
      provide: UPSTREAM_CLIENT,
      inject: [GATEWAY_CONFIG],
      useFactory: (config: GatewayConfig): UpstreamClient => createUpstreamClient(config.upstream, config.timeouts),
    },
  ],
  exports: [UPSTREAM_CLIENT],
})
export class UpstreamModule implements OnApplicationShutdown {
  constructor(@Inject(UPSTREAM_CLIENT) private readonly client: UpstreamClient) {}

  onApplicationShutdown(): void {
    // The interface has no close(); the built-in clients do, to drop keep-alive sockets.
    (this.client as Partial<{ close(): void }>).close?.();
  }
}
