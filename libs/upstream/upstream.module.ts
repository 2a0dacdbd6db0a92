import { type DynamicModule, Inject, Module, type OnApplicationShutdown, Optional } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '#config/gateway-config.js';
import { createUpstreamClient } from './upstream-client.factory.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import { registerConfigSection } from '#config/config-section.js';
import { MODEL_CATALOG, type ModelCatalog, modelsConfigSection } from './catalog/model-catalog.js';
import { ModelCatalogClient } from './catalog/model-catalog.client.js';

/**
 * The client built from `upstream.*` config, provided whatever `UPSTREAM_CLIENT`
 * ends up being, so that a host can wrap it (add headers, retries, metrics)
 * by injecting it into its own `UPSTREAM_CLIENT` factory.
 */
export const DEFAULT_UPSTREAM_CLIENT = Symbol('DEFAULT_UPSTREAM_CLIENT');

/**
 * A replacement for `UPSTREAM_CLIENT`, provided by the host module (where the
 * host's own providers are in scope); this module picks it up when present.
 */
export const UPSTREAM_CLIENT_OVERRIDE = Symbol('UPSTREAM_CLIENT_OVERRIDE');

/**
 * Provides `UPSTREAM_CLIENT`: the configured dialect's client, built from
 * `GATEWAY_CONFIG` (which must come from a global module), or a client the
 * host supplies. Either way its pooled sockets are released on shutdown.
 */
@Module({})
export class UpstreamModule implements OnApplicationShutdown {
  constructor(
    @Inject(UPSTREAM_CLIENT) private readonly client: UpstreamClient,
    @Optional() @Inject(DEFAULT_UPSTREAM_CLIENT) private readonly defaultClient?: UpstreamClient,
  ) {}

  /**
   * `client`: a ready client to use. `{ override: true }`: the host module
   * provides `UPSTREAM_CLIENT_OVERRIDE`; `UPSTREAM_CLIENT` is an alias of it,
   * so that Nest runs the override's lifecycle hooks once, not once per token.
   */
  static forRoot(client?: UpstreamClient | { override: true }): DynamicModule {
    const useOverride = !!client && 'override' in client && client.override === true;
    return {
      module: UpstreamModule,
      providers: [
        registerConfigSection(modelsConfigSection),
        {
          provide: DEFAULT_UPSTREAM_CLIENT,
          inject: [GATEWAY_CONFIG, MODEL_CATALOG],
          // Seen through the model catalog (`models`): public names, their metadata in the model list.
          useFactory: (config: GatewayConfig, catalog: ModelCatalog): UpstreamClient => {
            const client = createUpstreamClient(config.upstream, config.timeouts);
            return catalog.size > 0 ? new ModelCatalogClient(client, catalog) : client;
          },
        },
        useOverride
          ? { provide: UPSTREAM_CLIENT, useExisting: UPSTREAM_CLIENT_OVERRIDE }
          : client
            ? { provide: UPSTREAM_CLIENT, useValue: client }
            : { provide: UPSTREAM_CLIENT, useExisting: DEFAULT_UPSTREAM_CLIENT },
      ],
      exports: [UPSTREAM_CLIENT, DEFAULT_UPSTREAM_CLIENT, MODEL_CATALOG],
    };
  }

  onApplicationShutdown(): void {
    // The interface has no close(); the built-in clients do, to drop keep-alive
    // sockets. A host's client with Nest hooks of its own closes itself.
    for (const client of new Set([this.client, this.defaultClient])) {
      const c = client as Partial<{ close(): void; onApplicationShutdown(): void; onModuleDestroy(): void }> | undefined;
      if (c && !c.onApplicationShutdown && !c.onModuleDestroy) c.close?.();
    }
  }
}
