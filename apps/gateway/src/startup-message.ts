import type { GatewayConfig } from '../../../libs/config/gateway-config.js';
import { redactUrl } from '../../../libs/config/url-redaction.js';

/** The start-up log line: where the gateway listens and which upstream it uses (credentials hidden: logs are shipped and kept). */
export function listeningMessage(config: GatewayConfig, brokers: readonly string[] = []): string {
  const also = brokers.length ? ` and ${brokers.join(', ')}` : '';
  return `listening on http://${config.server.host}:${config.server.port}${also} → upstream ${redactUrl(config.upstream.baseUrl)} (${config.upstream.dialect} dialect)`;
}
