import type { GatewayConfig } from '#config/gateway-config.js';
import { readLimitsSettings } from '#src/primary-settings.js';
import { readObservabilitySettings, readStorageSettings, readTransportsSettings } from '#src/config-sections.js';
import type { PrimaryPlan } from './primary.js';
import { StartupError } from './startup-failure.js';
import { workerCount } from './workers.js';

/** How many gateway processes the config asks for, or the start-up error of a combination that cannot work. */
export function plannedWorkers(config: GatewayConfig): number {
  // Broker patterns are served from one process (see below), so with a broker and no
  // WORKERS setting the gateway runs as one process rather than one per core.
  const transports = readTransportsSettings(config);
  const withBrokers = !!(transports.natsUrl || transports.redisUrl);
  const workers = withBrokers && config.server.workers === undefined ? 1 : workerCount(config.server.workers);
  if (workers > 1 && readStorageSettings(config).driver === 'memory') {
    throw new StartupError('storage.driver=memory keeps state inside one process; with WORKERS > 1 use sqlite or postgres (or set WORKERS=1).', 2);
  }
  if (workers > 1 && withBrokers) {
    // Every worker would subscribe to the patterns and run each broker request once per worker
    // (Redis has no queue groups; a NATS queue group would deliver a cancel to one worker only).
    throw new StartupError('NATS_URL / REDIS_URL serve the broker patterns from one process: set WORKERS=1, or run a separate replica for the brokers.', 2);
  }
  return workers;
}

/** The settings the primary of worker mode runs on, read from the whole config (where the sections are loaded). */
export function primaryPlan(config: GatewayConfig): PrimaryPlan {
  const observability = readObservabilitySettings(config);
  return {
    workers: plannedWorkers(config),
    host: config.server.host,
    dataDir: config.server.dataDir,
    logFormat: observability.logFormat,
    metrics: observability.metrics,
    metricsPort: observability.metricsPort,
    limits: readLimitsSettings(config),
  };
}
