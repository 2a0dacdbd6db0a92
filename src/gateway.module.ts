import { OpenApiModule } from '#openapi/openapi.module.js';
import { consoleConfigSection } from '#console/console.config-section.js';
import { ConsoleModule } from '#console/console.module.js';
import { ConsoleSettingsModule } from '#console/console-settings.module.js';
import { type DynamicModule, Global, Module, type Provider, type Type } from '@nestjs/common';
import { type ConfigSection, configSectionsOf } from '#config/config-section.js';
import { ConfigError, validateGatewayConfig } from '#config/config.loader.js';
import { OWNER_IDS, OwnerIds } from '#config/owner-ids.js';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { CoreModule } from '#core/core.module.js';
import { SIGNING_KEY } from '#core/signing/signing-key.js';
import { readStateSettings } from '#state/config/state-settings.js';
import { OpenAiExceptionFilter } from '#edge/errors/openai-exception.filter.js';
import { ROUTE_ERROR_FILTER } from '#tool-sdk/routes/gateway-routes.js';
import { RESPONSE_STATE } from '#core/loop/response-state.interface.js';
import { LimitsModule } from '#limits/limits.module.js';
import { MessagesModule } from '#messages/messages.module.js';
import { PassthroughModule } from '#passthrough/passthrough.module.js';
import { ObservabilityModule } from '#observability/observability.module.js';
import { ResponsesModule } from '#responses/responses.module.js';
import { ApiKeyAuthModule } from '#state/auth/api-key-auth.module.js';
import { ApiKeyAuthenticator } from '#state/auth/api-key.authenticator.js';
import { RPC_CALLER_AUTHENTICATOR } from '#responses/rpc/rpc-caller-auth.js';
import { StateModule } from '#state/state.module.js';
import { StorageSettingsModule } from '#storage/config/storage-settings.module.js';
import { STATE_STORE_OVERRIDE } from '#storage/storage.module.js';
import { BUILTIN_TOOL_MODULES } from '#tools/builtin-tool-modules.js';
import { UPSTREAM_CLIENT_OVERRIDE, UpstreamModule } from '#upstream/upstream.module.js';
import {
  GATEWAY_MODULE_OPTIONS,
  GatewayModuleBase,
  type GatewayModuleAsyncOptions,
  type GatewayModuleExtras,
  type GatewayModuleForRootOptions,
  type GatewayModuleOptions,
} from './gateway.module-definition.js';
import { GatewayOverrideError, overrideProvider } from '#core/overrides/gateway-override.js';
import { GatewayOverrides, OVERRIDE_CHECKS, type OverrideCheck } from './gateway-overrides.service.js';

export type { GatewayModuleOptions, GatewayModuleExtras, GatewayModuleAsyncOptions } from './gateway.module-definition.js';

const UPSTREAM_METHODS = ['infer', 'listModels', 'probe'] as const;
const RESPONSE_STATE_METHODS = ['load', 'save'] as const;

/**
 * The config of the options `forRoot` takes and a `forRootAsync` factory
 * resolves to: `{ config }`, one shape. A factory that resolves to the
 * settings themselves is refused by name rather than guessed at.
 */
function configOf(options: GatewayModuleOptions | undefined, sections: readonly ConfigSection[]): GatewayConfig {
  const o = options ?? {};
  const other = o instanceof GatewayConfig ? ['(a GatewayConfig)'] : Object.keys(o).filter((key) => key !== 'config');
  if (other.length > 0) {
    throw new ConfigError(
      `GatewayModule.forRootAsync: the factory must resolve to { config }, as forRoot takes it; it gave ${other.join(', ')} beside it. Wrap the settings: useFactory: () => ({ config: ... }).`,
    );
  }
  return validateGatewayConfig(o.config ?? {}, { sections });
}

/**
 * The modules a gateway with these extras loads, besides the host's own:
 * also where the config sections come from (`configSectionsOf`).
 */
export function gatewayModules(extras: GatewayModuleExtras = {}): Array<Type | DynamicModule> {
  const withState = extras.state !== false && !extras.responseState;
  const overridden = !!extras.upstream;
  return [
    ...(extras.imports ?? []),
    ObservabilityModule,
    UpstreamModule.forRoot(overridden ? { override: true } : undefined),
    CoreModule,
    ResponsesModule,
    MessagesModule,
    PassthroughModule,
    ApiKeyAuthModule,
    LimitsModule,
    StorageSettingsModule,
    OpenApiModule,
    ConsoleSettingsModule,
    ...(withState ? [StateModule] : []),
    ...(extras.toolModules ?? BUILTIN_TOOL_MODULES),
  ];
}

/**
 * Refuses overrides that would be silently ignored: nothing would read a
 * `stateStore` without the state module, and `responseState` replaces the
 * module that reads it.
 */
function checkCombination(extras: GatewayModuleExtras): void {
  if (extras.stateStore && extras.state === false) {
    throw new GatewayOverrideError('stateStore cannot take effect with state: false: only the built-in state module reads STATE_STORE.');
  }
  if (extras.stateStore && extras.responseState) {
    throw new GatewayOverrideError('stateStore cannot take effect together with responseState: the responseState override replaces the state module that reads STATE_STORE.');
  }
}

/**
 * Switchyard as an importable module. `apps/gateway` is one host of it; any
 * Nest application (HTTP, hybrid or pure microservice) can import it the same
 * way and add tool-type modules of its own through `imports`.
 */
@Global()
@Module({})
export class GatewayModule extends GatewayModuleBase {
  static override forRoot(options: GatewayModuleForRootOptions = {}): DynamicModule {
    // Validated here, so that a bad setting fails where the module is declared.
    const config = validateGatewayConfig(options.config ?? {}, { sections: configSectionsOf(gatewayModules(options)) });
    // The console's routes exist only when it is on (forRootAsync, whose config comes later, imports ConsoleModule itself).
    const consoleModule = consoleConfigSection.read(config).enabled ? [ConsoleModule] : [];
    return GatewayModule.assemble(super.forRoot({ ...options, config }), options, consoleModule);
  }

  static override forRootAsync(options: GatewayModuleAsyncOptions): DynamicModule {
    return GatewayModule.assemble(super.forRootAsync(options), options);
  }

  private static assemble(base: DynamicModule, extras: GatewayModuleExtras, optionalModules: Type[] = []): DynamicModule {
    checkCombination(extras);
    const sections = configSectionsOf(gatewayModules(extras));
    const providers: Provider[] = [
      ...(base.providers ?? []),
      { provide: GATEWAY_CONFIG, inject: [GATEWAY_MODULE_OPTIONS], useFactory: (o: GatewayModuleOptions) => configOf(o, sections) },
    ];
    const exported: Array<symbol | Type | DynamicModule> = [];
    // Each override is provided once, under one token (others alias it), so that Nest
    // runs a class override's own lifecycle hooks once; its shape is checked at init.
    const checks: OverrideCheck[] = [];

    const upstream = extras.upstream;
    if (upstream) {
      providers.push(overrideProvider(UPSTREAM_CLIENT_OVERRIDE, upstream, 'UPSTREAM_CLIENT'));
      exported.push(UPSTREAM_CLIENT_OVERRIDE);
      checks.push({ token: UPSTREAM_CLIENT_OVERRIDE, name: 'UPSTREAM_CLIENT', methods: UPSTREAM_METHODS, close: false });
    }
    if (extras.stateStore) {
      // StorageModule checks, initialises and closes it like its own drivers' stores.
      providers.push(overrideProvider(STATE_STORE_OVERRIDE, extras.stateStore, 'STATE_STORE'));
      exported.push(STATE_STORE_OVERRIDE);
    }
    if (extras.responseState) {
      providers.push(overrideProvider(RESPONSE_STATE, extras.responseState, 'RESPONSE_STATE'));
      exported.push(RESPONSE_STATE);
      checks.push({ token: RESPONSE_STATE, name: 'RESPONSE_STATE', methods: RESPONSE_STATE_METHODS, close: true });
    }
    providers.push({ provide: OVERRIDE_CHECKS, useValue: checks }, GatewayOverrides);
    // One signing secret for every surface that signs what clients hand back (compaction, thinking).
    providers.push({ provide: SIGNING_KEY, inject: [GATEWAY_CONFIG], useFactory: (config: GatewayConfig) => readStateSettings(config).compactionKey });
    exported.push(SIGNING_KEY);
    // One derivation of owner ids for every reader of a key (authentication, the usage API's administrators).
    providers.push({ provide: OWNER_IDS, inject: [GATEWAY_CONFIG], useFactory: (config: GatewayConfig) => new OwnerIds(config.server) });
    exported.push(OWNER_IDS);
    // Gateway routes, a tool module's among them, answer errors through the edge's envelope.
    providers.push({ provide: ROUTE_ERROR_FILTER, useClass: OpenAiExceptionFilter });
    exported.push(ROUTE_ERROR_FILTER);
    // Broker callers are checked by the same authenticator as HTTP ones (libs/responses/rpc).
    providers.push({ provide: RPC_CALLER_AUTHENTICATOR, useExisting: ApiKeyAuthenticator });
    exported.push(RPC_CALLER_AUTHENTICATOR);

    const imports = [...(base.imports ?? [])];
    for (const m of [...gatewayModules(extras), ...optionalModules]) if (!imports.includes(m)) imports.push(m);
    return {
      ...base,
      global: true,
      imports,
      providers,
      exports: [GATEWAY_CONFIG, UpstreamModule, CoreModule, ResponsesModule, ...exported],
    };
  }
}
