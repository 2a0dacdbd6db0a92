import type { PrimaryService } from '#core/cluster/primary-channel.js';
import type { GatewayConfig } from '#config/gateway-config.js';
import { readLimitsSettings } from '#limits/limits.settings.js';
import { LIMITS_SERVICE, limitsPrimaryService } from '#limits/primary.limiter.js';
import { ClusterMetrics, METRICS_SERVICE } from '#observability/metrics/cluster-metrics.js';
import { readObservabilitySettings } from './config-sections.js';

/**
 * What the primary of worker mode runs for its workers, from the gateway's
 * config: the per-owner limits' counts (unless Redis holds them) and the
 * merged metrics. `metrics` is also what a metrics port in the primary serves.
 */
export function primaryServices(config: GatewayConfig): { services: Record<string, PrimaryService>; metrics: ClusterMetrics | null } {
  const services: Record<string, PrimaryService> = {};
  const limits = readLimitsSettings(config);
  if (limits && !limits.redisUrl) services[LIMITS_SERVICE] = limitsPrimaryService(limits);
  const metrics = readObservabilitySettings(config).metrics ? new ClusterMetrics() : null;
  if (metrics) services[METRICS_SERVICE] = metrics.service();
  return { services, metrics };
}
