import type { TimeoutConfig, UpstreamConfig } from '#config/gateway-config.js';
import { ChatDialectClient } from './chat-dialect.client.js';
import type { DialectClient } from './dialect-client.base.js';
import { ResponsesDialectClient } from './responses-dialect.client.js';
import type { UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import { UpstreamPool } from './upstream-pool.client.js';

/**
 * The client for the configured dialect; with several `baseUrls`, a pool of
 * them. Call `close()` on shutdown to release pooled sockets (and stop the
 * pool's health checks).
 */
export function createUpstreamClient(upstream: UpstreamConfig, timeouts: TimeoutConfig): UpstreamClient & { close(): void } {
  const urls = upstream.baseUrls ?? [];
  if (urls.length <= 1) return createDialectClient(upstream, timeouts);
  return new UpstreamPool(
    urls.map((url) => ({ url, client: createDialectClient({ ...upstream, baseUrl: url }, timeouts) })),
    { healthCheckMs: upstream.healthCheckMs },
  );
}

function createDialectClient(upstream: UpstreamConfig, timeouts: TimeoutConfig): DialectClient {
  switch (upstream.dialect) {
    case 'responses':
      return new ResponsesDialectClient(upstream, timeouts);
    case 'chat':
      return new ChatDialectClient(upstream, timeouts);
    default:
      throw new Error(`Unknown upstream dialect: ${String(upstream.dialect)}`);
  }
}
