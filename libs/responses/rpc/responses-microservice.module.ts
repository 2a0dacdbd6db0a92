import { type DynamicModule, Module } from '@nestjs/common';
import { responsesPatterns } from './responses-rpc.patterns.js';
import { ResponsesRpcController, responsesRpcController } from './responses.rpc-controller.js';
import { RpcRunRegistry } from './rpc-run.registry.js';

/**
 * Serves `responses.create`, `responses.stream` and `responses.cancel` on
 * whatever microservice transports the host connects (hybrid app) or is
 * created with (pure microservice). Import it next to `GatewayModule`, which
 * provides the `ResponsesService` it delegates to; `forRoot({ prefix })`
 * serves the patterns under a prefix.
 */
@Module({
  controllers: [ResponsesRpcController],
  providers: [RpcRunRegistry],
  exports: [RpcRunRegistry],
})
export class GatewayMicroserviceModule {
  static forRoot(options: { prefix?: string } = {}): DynamicModule {
    if (!options.prefix) return { module: GatewayMicroserviceModule };
    return {
      module: PrefixedGatewayMicroserviceModule,
      controllers: [responsesRpcController(responsesPatterns(options.prefix))],
      providers: [RpcRunRegistry],
      exports: [RpcRunRegistry],
    };
  }
}

/** Carries the prefixed controller instead of the default one (a module's static controllers cannot be dropped). */
@Module({})
class PrefixedGatewayMicroserviceModule {}
