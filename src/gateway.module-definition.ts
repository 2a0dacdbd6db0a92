import { ConfigurableModuleBuilder, type DynamicModule, type Type } from '@nestjs/common';
import type { GatewayConfig } from '#config/gateway-config.js';
import type { ResponseStateStore } from '#core/loop/response-state.interface.js';
import type { StateStore } from '#storage/state-store.interface.js';
import type { UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import type { GatewayOverride } from '#core/overrides/gateway-override.js';

/** What `forRoot` takes, and what a `forRootAsync` factory resolves to. */
export interface GatewayModuleOptions {
  /** A validated config, or raw settings to validate (defaults fill the rest). */
  config?: GatewayConfig | Record<string, unknown>;
}

/**
 * Options that shape the module itself, so they are known when it is
 * assembled: the same keys, with the same meaning, in `forRoot` and `forRootAsync`.
 */
export interface GatewayModuleExtras {
  /** Tool-type modules to load instead of the built-in set. */
  toolModules?: Array<Type | DynamicModule>;
  /**
   * More modules: extra tool types, storage, auth, and whatever the override
   * factories inject. In `forRootAsync` these are also what `inject` resolves from.
   */
  imports?: Array<Type | DynamicModule>;
  /**
   * `false` leaves out the built-in state module (storage, stored responses,
   * conversations, compaction, WebSocket mode), e.g. to provide
   * `RESPONSE_STATE` from a module of your own in `imports`.
   */
  state?: false;
  /** Replaces `UPSTREAM_CLIENT`; a factory can inject `DEFAULT_UPSTREAM_CLIENT` to wrap the configured one. */
  upstream?: GatewayOverride<UpstreamClient>;
  /**
   * Replaces `RESPONSE_STATE`, the loop's persistence and continuation. It
   * replaces the built-in state module too (whose stored-response routes read
   * its own store), so `stateStore` cannot be combined with it.
   */
  responseState?: GatewayOverride<ResponseStateStore>;
  /** Replaces `STATE_STORE` under the built-in state module, instead of the `storage.driver` one. */
  stateStore?: GatewayOverride<StateStore>;
}

export const GATEWAY_EXTRAS_DEFAULTS: GatewayModuleExtras = {
  toolModules: undefined,
  imports: [],
  state: undefined,
  upstream: undefined,
  responseState: undefined,
  stateStore: undefined,
};

export const {
  ConfigurableModuleClass: GatewayModuleBase,
  MODULE_OPTIONS_TOKEN: GATEWAY_MODULE_OPTIONS,
  OPTIONS_TYPE: GATEWAY_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: GATEWAY_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<GatewayModuleOptions>({ moduleName: 'Gateway' })
  .setClassMethodName('forRoot')
  .setExtras<GatewayModuleExtras>(GATEWAY_EXTRAS_DEFAULTS, (definition) => definition)
  .build();

export type GatewayModuleForRootOptions = GatewayModuleOptions & GatewayModuleExtras;
export type GatewayModuleAsyncOptions = typeof GATEWAY_ASYNC_OPTIONS_TYPE;
