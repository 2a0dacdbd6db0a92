import type { DynamicModule, Type } from '@nestjs/common';
import type { GatewayOverride } from '#core/overrides/gateway-override.js';
import type { UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import type { StateStore } from '#storage/state-store.interface.js';

/**
 * What a plugin package (or file) exports for the shipped `switchyard`
 * command to load at boot (`plugins` setting, `SWITCHYARD_PLUGINS`,
 * `--plugin`): tool-type modules, and optionally the upstream client or the
 * state store. The modules are imported into the gateway beside the built-in
 * ones and checked by the same explorer (duplicates, missing decorators,
 * request scope refuse the boot).
 */
export interface SwitchyardPlugin {
  /** Shown in the start-up summary; the package name (or file) when unset. */
  name?: string;
  /** Tool-type modules: each provides a `@ToolHandlerProvider` and, for a gateway-owned type, a `@GatewayExecutorProvider`. */
  toolModules?: Array<Type | DynamicModule>;
  /** Replaces the configured upstream client (at most one plugin may). */
  upstream?: GatewayOverride<UpstreamClient>;
  /** Replaces the `storage.driver` store (at most one plugin may). */
  stateStore?: GatewayOverride<StateStore>;
}

/** Marks the plugin's export (the default export, or one named `plugin`); it returns what it is given, typed. */
export function definePlugin(plugin: SwitchyardPlugin): SwitchyardPlugin {
  return plugin;
}
