import { IsOptional, IsString, IsUrl } from 'class-validator';
import { defineClassSection } from '#config/class-config-section.js';

/** Broker transports the deployable gateway serves the Responses patterns on, besides HTTP. */
export class TransportsConfig {
  @IsOptional() @IsUrl({ require_tld: false, protocols: ['nats', 'tls', 'ws', 'wss'], require_protocol: true }) natsUrl?: string;
  @IsOptional() @IsUrl({ require_tld: false, protocols: ['redis', 'rediss'], require_protocol: true }) redisUrl?: string;
  /** Prefix of the served patterns (`tenant-a.` → `tenant-a.responses.create`), for several gateways on one broker. */
  @IsString() patternPrefix = '';
}

/** Nest token for the validated `transports` section. */
export const TRANSPORTS_SETTINGS = Symbol('TRANSPORTS_SETTINGS');

export const transportsConfigSection = defineClassSection({
  key: 'transports',
  type: TransportsConfig,
  token: TRANSPORTS_SETTINGS,
  env: [
    { env: 'NATS_URL', path: 'natsUrl', kind: 'string', secret: true },
    { env: 'REDIS_URL', path: 'redisUrl', kind: 'string', secret: true },
    { env: 'TRANSPORT_PATTERN_PREFIX', path: 'patternPrefix', kind: 'string' },
  ],
});

/** The `transports` section of a raw or validated section value (defaults when absent). */
export const parseTransportsSettings = transportsConfigSection.parse;
/** The transports settings of a gateway config, for code outside the Nest container. */
export const readTransportsSettings = transportsConfigSection.read;
