import { type DynamicModule, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/gateway-config.js';
import { createUpstreamClient } from './upstream-client.factory.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from './upstream-client.interface.js';

/**
 * Provides `UPSTREAM_CLIENT`: the configured dialect's client, built from
 * `GATEWAY_CONFIG` (which must come from a global module), or a client the
 * host supplies. Either way its pooled sockets are released on shutdown.
 */
@Module({})
export class UpstreamModule implements OnApplicationShutdown {
  constructor(@Inject(UPSTREAM_CLIENT) private readonly client: UpstreamClient) {}

  static forRoot(client?: UpstreamClient): DynamicModule {
    return {
      module: UpstreamModule,
      providers: [
        client
          ? { provide: UPSTREAM_CLIENT, useValue: client }
          : {
              provide: UPSTREAM_CLIENT,
              inject: [GATEWAY_CONFIG],
              useFactory: (config: GatewayConfig): UpstreamClient => createUpstreamClient(config.upstream, config.timeouts),
            },
      ],
      exports: [UPSTREAM_CLIENT],
    };
  }

  onApplicationShutdown(): void {
    // The interface has no close(); the built-in clients do, to drop keep-alive sockets.
    (this.client as Partial<{ close(): void }>).close?.();
  }
}
