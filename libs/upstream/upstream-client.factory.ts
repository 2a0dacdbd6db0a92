import type { TimeoutConfig, UpstreamConfig } from '../config/gateway-config.js';
import { ChatDialectClient } from './chat-dialect.client.js';
import type { DialectClient } from './dialect-client.base.js';
import { ResponsesDialectClient } from './responses-dialect.client.js';

/** The client for the configured dialect. Call `close()` on shutdown to release pooled sockets. */
export function createUpstreamClient(upstream: UpstreamConfig, timeouts: TimeoutConfig): DialectClient {
  switch (upstream.dialect) {
    case 'responses':
      return new ResponsesDialectClient(upstream, timeouts);
    case 'chat':
      return new ChatDialectClient(upstream, timeouts);
    default:
      throw new Error(`Unknown upstream dialect: ${String(upstream.dialect)}`);
  }
}
