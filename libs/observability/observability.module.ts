import { Global, Module } from '@nestjs/common';
import { registerConfigSection } from '#config/config-section.js';
import { RUN_OBSERVER } from '#core/loop/run-observer.interface.js';
import { RELAY_OBSERVER } from '#core/upstream/upstream-relay.interface.js';
import { STORE_OBSERVER } from '#storage/store-observer.js';
import { INTERACTIVE_LOAD } from '#tool-sdk/ports/interactive-load.js';
import { OBSERVABILITY_SETTINGS, observabilityConfigSection } from './config/observability.config-section.js';
import { RequestTelemetry } from './context/request-telemetry.service.js';
import { RpcRunTelemetry } from './context/rpc-run-context.service.js';
import { RPC_RUN_CONTEXT } from '#responses/rpc/rpc-run-context.js';
import { DrainState } from './lifecycle/drain-state.service.js';
import { LogWriter } from './logging/log-writer.service.js';
import { RequestLog } from './logging/request-log.service.js';
import { GatewayMetrics } from './metrics/gateway-metrics.service.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { WebSocketGauge } from './metrics/websocket-gauge.service.js';
import { RelayTelemetry } from './run/relay-telemetry.observer.js';
import { RunTelemetry } from './run/run-telemetry.observer.js';
import { StoreTelemetry } from './storage/store-telemetry.observer.js';
import { TracingService } from './tracing/tracing.service.js';
import { UsageModule } from './usage/usage.module.js';

/**
 * Request logs, Prometheus metrics and OpenTelemetry traces. It reaches the
 * rest only through ports (`RUN_OBSERVER` for the loop, `STORE_OBSERVER` for
 * storage) and two express middlewares (`configureGatewayApp`), so the
 * modules it watches do not know it. Global: those ports are resolved by
 * token from modules that do not import this one. Expects `GATEWAY_CONFIG`;
 * owns the `observability` section.
 */
@Global()
@Module({
  imports: [UsageModule],
  controllers: [MetricsController],
  providers: [
    registerConfigSection(observabilityConfigSection),
    GatewayMetrics,
    TracingService,
    LogWriter,
    RequestLog,
    DrainState,
    RequestTelemetry,
    RunTelemetry,
    RelayTelemetry,
    StoreTelemetry,
    WebSocketGauge,
    { provide: RUN_OBSERVER, useExisting: RunTelemetry },
    { provide: RELAY_OBSERVER, useExisting: RelayTelemetry },
    { provide: STORE_OBSERVER, useExisting: StoreTelemetry },
    { provide: INTERACTIVE_LOAD, useExisting: RequestTelemetry },
    RpcRunTelemetry,
    { provide: RPC_RUN_CONTEXT, useExisting: RpcRunTelemetry },
  ],
  exports: [
    OBSERVABILITY_SETTINGS,
    GatewayMetrics,
    TracingService,
    LogWriter,
    RequestTelemetry,
    DrainState,
    RUN_OBSERVER,
    RELAY_OBSERVER,
    STORE_OBSERVER,
    INTERACTIVE_LOAD,
    RPC_RUN_CONTEXT,
  ],
})
export class ObservabilityModule {}
