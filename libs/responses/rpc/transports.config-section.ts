import { IsInt, IsOptional, IsString, IsUrl, Max, Min } from 'class-validator';
import { defineConfigSection } from '#config/config-section.js';

/** Broker transports the deployable gateway serves the Responses patterns on, besides HTTP. */
export class TransportsConfig {
  @IsOptional() @IsUrl({ require_tld: false, protocols: ['nats', 'tls', 'ws', 'wss'], require_protocol: true }) natsUrl?: string;
  @IsOptional() @IsUrl({ require_tld: false, protocols: ['redis', 'rediss'], require_protocol: true }) redisUrl?: string;
  /** Prefix of the served patterns (`tenant-a.` → `tenant-a.responses.create`), for several gateways on one broker. */
  @IsString() patternPrefix = '';
  /**
   * NATS queue group of the request patterns: gateways in one group share the work, each
   * request reaching one of them. Cancels are not queued: every gateway hears them and
   * the one running the run stops it.
   */
  @IsString() natsQueue = 'switchyard';
  /**
   * Redis: how long a gateway that finds the patterns' lease held by a live gateway waits for it
   * (a standby during a rolling restart: the old gateway gives the lease up when it starts
   * draining) before refusing to start. 0: refuse as soon as the holder is seen alive.
   */
  @IsInt() @Min(0) @Max(3_600_000) redisLeaseWaitMs = 0;
  /** How often a run's broker stream carries a heartbeat frame while it is alive (clients that ask for them). */
  @IsInt() @Min(100) @Max(60_000) heartbeatMs = 2000;
}

/** Nest token for the validated `transports` section. */
export const TRANSPORTS_SETTINGS = Symbol('TRANSPORTS_SETTINGS');

export const transportsConfigSection = defineConfigSection({
  key: 'transports',
  type: TransportsConfig,
  token: TRANSPORTS_SETTINGS,
  env: [
    { env: 'NATS_URL', path: 'natsUrl', kind: 'string', secret: true },
    { env: 'REDIS_URL', path: 'redisUrl', kind: 'string', secret: true },
    { env: 'TRANSPORT_PATTERN_PREFIX', path: 'patternPrefix', kind: 'string' },
    { env: 'NATS_QUEUE', path: 'natsQueue', kind: 'string' },
    { env: 'TRANSPORT_HEARTBEAT_MS', path: 'heartbeatMs', kind: 'int' },
    { env: 'REDIS_LEASE_WAIT_MS', path: 'redisLeaseWaitMs', kind: 'int' },
  ],
});

/** The `transports` section of a raw or validated section value (defaults when absent). */
export const parseTransportsSettings = transportsConfigSection.parse;
/** The transports settings of a gateway config, for code outside the Nest container. */
export const readTransportsSettings = transportsConfigSection.read;
