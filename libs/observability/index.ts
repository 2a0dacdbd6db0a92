export { ObservabilityModule } from './observability.module.js';
export { RequestTelemetry } from './context/request-telemetry.service.js';
export { GatewayMetrics } from './metrics/gateway-metrics.service.js';
export { TracingService } from './tracing/tracing.service.js';
export { LogWriter, LOG_SINK, type LineSink, type LogFields } from './logging/log-writer.service.js';
export { installGracefulDrain } from './lifecycle/graceful-drain.js';
export { DrainState } from './lifecycle/drain-state.service.js';
export { startupSummary, redactUrl } from './startup/startup-summary.js';
export {
  ObservabilityConfig,
  OBSERVABILITY_SETTINGS,
  observabilityConfigSection,
  parseObservabilitySettings,
  readObservabilitySettings,
} from './config/observability.config-section.js';
