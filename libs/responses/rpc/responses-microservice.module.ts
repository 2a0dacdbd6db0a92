import { type DynamicModule, Module } from '@nestjs/common';
import { RESPONSES_PATTERNS, SERVED_RESPONSES_PATTERNS, servedPatterns } from './responses-rpc.patterns.js';
import { ResponsesRpcController, responsesRpcController } from './responses.rpc-controller.js';
import { RpcRunRegistry } from './rpc-run.registry.js';
import { ServeLeaseHolder } from './serve-lease.holder.js';
import { TRANSPORTS_SETTINGS, type TransportsConfig } from './transports.config-section.js';

/**
 * Serves `responses.create`, `responses.stream` and `responses.cancel` on
 * whatever microservice transports the host connects (hybrid app) or is
 * created with (pure microservice). Import it next to `GatewayModule`, which
 * provides the `ResponsesService` it delegates to. `forRoot()` serves the
 * patterns under `transports.patternPrefix`, `forRoot({ prefix })` under that
 * prefix; imported bare (no `forRoot`), it serves them unprefixed.
 */
@Module({
  controllers: [ResponsesRpcController],
  providers: [RpcRunRegistry, ServeLeaseHolder, { provide: SERVED_RESPONSES_PATTERNS, useValue: RESPONSES_PATTERNS }],
  exports: [RpcRunRegistry, SERVED_RESPONSES_PATTERNS],
})
export class GatewayMicroserviceModule {
  static forRoot(options: { prefix?: string } = {}): DynamicModule {
    return {
      module: ConfiguredGatewayMicroserviceModule,
      // A class of its own per module: its patterns are set once the config is known (see the controller).
      controllers: [responsesRpcController(RESPONSES_PATTERNS)],
      providers: [
        RpcRunRegistry,
        ServeLeaseHolder,
        {
          provide: SERVED_RESPONSES_PATTERNS,
          useFactory: (transports?: TransportsConfig) => servedPatterns(options.prefix, transports?.patternPrefix),
          inject: [{ token: TRANSPORTS_SETTINGS, optional: true }],
        },
      ],
      exports: [RpcRunRegistry, SERVED_RESPONSES_PATTERNS],
    };
  }
}

/** Carries the configured controller instead of the default one (a module's static controllers cannot be dropped). */
@Module({})
class ConfiguredGatewayMicroserviceModule {}
