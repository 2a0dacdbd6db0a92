import type { PrimaryService } from '#core/cluster/primary-channel.js';
import type { LimitsSettings } from '#limits/limits.settings.js';
import { LIMITS_SERVICE, limitsPrimaryService } from '#limits/primary.limiter.js';
import { ClusterMetrics, METRICS_SERVICE } from '#observability/metrics/cluster-metrics.js';

/**
 * What the primary of worker mode runs for its workers: the per-owner limits'
 * counts (unless Redis holds them) and the merged metrics. `metrics` is also
 * what a metrics port in the primary serves. It takes the settings already
 * read (`readLimitsSettings`, `observability.metrics`), so that the primary
 * loads no config section.
 */
/** The settings `primaryServices` runs on. */
export interface PrimaryServiceSettings {
  limits: LimitsSettings | null;
  metrics: boolean;
}

export function primaryServices(settings: PrimaryServiceSettings): { services: Record<string, PrimaryService>; metrics: ClusterMetrics | null } {
  const services: Record<string, PrimaryService> = {};
  const { limits } = settings;
  if (limits && !limits.redisUrl) services[LIMITS_SERVICE] = limitsPrimaryService(limits);
  const metrics = settings.metrics ? new ClusterMetrics() : null;
  if (metrics) services[METRICS_SERVICE] = metrics.service();
  return { services, metrics };
}
