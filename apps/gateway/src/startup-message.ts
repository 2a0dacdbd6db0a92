import type { GatewayConfig } from '../../../libs/config/gateway-config.js';
import { redactUrl } from '../../../libs/config/url-redaction.js';

/** The start-up log line: where the gateway listens and which upstream it uses (credentials hidden: logs are shipped and kept). */
export function listeningMessage(config: GatewayConfig): string {
  return `listening on http://${config.server.host}:${config.server.port} → upstream ${redactUrl(config.upstream.baseUrl)} (${config.upstream.dialect} dialect)`;
}
