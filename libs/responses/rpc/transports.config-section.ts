import { IsOptional, IsString, IsUrl } from 'class-validator';
import { classSectionKeys, parseClassSection } from '#config/class-config-section.js';
import { defineConfigSection } from '#config/config-section.js';
import type { GatewayConfig } from '#config/gateway-config.js';

/** Broker transports the deployable gateway serves the Responses patterns on, besides HTTP. */
export class TransportsConfig {
  @IsOptional() @IsUrl({ require_tld: false, protocols: ['nats', 'tls', 'ws', 'wss'], require_protocol: true }) natsUrl?: string;
  @IsOptional() @IsUrl({ require_tld: false, protocols: ['redis', 'rediss'], require_protocol: true }) redisUrl?: string;
  /** Prefix of the served patterns (`tenant-a.` → `tenant-a.responses.create`), for several gateways on one broker. */
  @IsString() patternPrefix = '';
}

/** Nest token for the validated `transports` section. */
export const TRANSPORTS_SETTINGS = Symbol('TRANSPORTS_SETTINGS');

/** The `transports` section of a raw or validated section value (defaults when absent). */
export function parseTransportsSettings(section: unknown): TransportsConfig {
  return parseClassSection('transports', TransportsConfig, section);
}

/** The transports of a gateway config, for a host deciding at start-up which brokers to connect. */
export function readTransportsSettings(config: GatewayConfig): TransportsConfig {
  return parseTransportsSettings(config.transports);
}

export const transportsConfigSection = defineConfigSection<TransportsConfig>({
  key: 'transports',
  token: TRANSPORTS_SETTINGS,
  env: [
    { env: 'NATS_URL', path: 'natsUrl', kind: 'string' },
    { env: 'REDIS_URL', path: 'redisUrl', kind: 'string' },
    { env: 'TRANSPORT_PATTERN_PREFIX', path: 'patternPrefix', kind: 'string' },
  ],
  keys: classSectionKeys(TransportsConfig),
  parse: (section) => parseTransportsSettings(section),
});
