import { DynamicModule, Global, Module, type Provider, type Type } from '@nestjs/common';
import { validateGatewayConfig } from '../libs/config/config.loader.js';
import { GATEWAY_CONFIG, GatewayConfig } from '../libs/config/gateway-config.js';
import { CoreModule } from '../libs/core/core.module.js';
import { LimitsModule } from '../libs/limits/limits.module.js';
import { MessagesModule } from '../libs/messages/messages.module.js';
import { ObservabilityModule } from '../libs/observability/observability.module.js';
import { ResponsesModule } from '../libs/responses/responses.module.js';
import { ApiKeyAuthModule } from '../libs/state/auth/api-key-auth.module.js';
import { StateModule } from '../libs/state/state.module.js';
import { BUILTIN_TOOL_MODULES } from '../libs/tools/builtin-tool-modules.js';
import type { UpstreamClient } from '../libs/upstream/upstream-client.interface.js';
import { UpstreamModule } from '../libs/upstream/upstream.module.js';

export interface GatewayModuleOptions {
  /** A validated config, or raw settings to validate (defaults fill the rest). */
  config?: GatewayConfig | Record<string, unknown>;
  /** Tool-type modules to load instead of the built-in set. */
  toolModules?: Array<Type | DynamicModule>;
  /** More modules next to the tool modules: extra tool types, storage, auth. */
  imports?: Array<Type | DynamicModule>;
  /** Replace the upstream client (tests, custom transports). */
  upstreamClient?: UpstreamClient;
  /**
   * `false` leaves out the built-in state module (storage, stored responses,
   * conversations, compaction, WebSocket mode), e.g. to provide
   * `RESPONSE_STATE` from a module of your own in `imports`.
   */
  state?: false;
}

export interface GatewayModuleAsyncOptions {
  imports?: Array<Type | DynamicModule>;
  inject?: Array<string | symbol | Type>;
  useFactory: (...args: any[]) => GatewayConfig | Record<string, unknown> | Promise<GatewayConfig | Record<string, unknown>>;
  toolModules?: Array<Type | DynamicModule>;
  extraImports?: Array<Type | DynamicModule>;
  /** See `GatewayModuleOptions.state`. */
  state?: false;
}

/**
 * Switchyard as an importable module. `apps/gateway` is one host of it; any
 * Nest application (or microservice host) can import it the same way and add
 * tool-type modules of its own through `imports`.
 */
@Global()
@Module({})
export class GatewayModule {
  static forRoot(options: GatewayModuleOptions = {}): DynamicModule {
    const config = validateGatewayConfig(options.config ?? {});
    return GatewayModule.assemble(
      { provide: GATEWAY_CONFIG, useValue: config },
      options.toolModules ?? BUILTIN_TOOL_MODULES,
      options.imports ?? [],
      [],
      options.state !== false,
      options.upstreamClient,
    );
  }

  static forRootAsync(options: GatewayModuleAsyncOptions): DynamicModule {
    return GatewayModule.assemble(
      {
        provide: GATEWAY_CONFIG,
        inject: options.inject ?? [],
        useFactory: async (...args: unknown[]) => validateGatewayConfig(await options.useFactory(...args)),
      },
      options.toolModules ?? BUILTIN_TOOL_MODULES,
      options.extraImports ?? [],
      options.imports ?? [],
      options.state !== false,
    );
  }

  private static assemble(
    configProvider: Provider,
    toolModules: Array<Type | DynamicModule>,
    extra: Array<Type | DynamicModule>,
    configImports: Array<Type | DynamicModule>,
    withState: boolean,
    upstreamClient?: UpstreamClient,
  ): DynamicModule {
    // State is always on, memory driver included: memory is still a store, and
    // continuations within one process work on it.
    const state = withState ? [StateModule] : [];
    return {
      module: GatewayModule,
      global: true,
      imports: [
        ...configImports,
        ObservabilityModule,
        UpstreamModule.forRoot(upstreamClient),
        CoreModule,
        ResponsesModule,
        MessagesModule,
        ApiKeyAuthModule,
        LimitsModule,
        ...state,
        ...toolModules,
        ...extra,
      ],
      providers: [configProvider],
      exports: [GATEWAY_CONFIG, UpstreamModule, CoreModule],
    };
  }
}
