import { Type } from 'class-transformer';
import { IsInt, IsObject, IsOptional, IsString, Max, Min, MinLength, ValidateNested } from 'class-validator';
import { defineConfigSection } from '#config/config-section.js';
import type { GatewayConfig } from '#config/gateway-config.js';

/**
 * The `state` section of the gateway config, owned by the state module the
 * way `webSearch` is owned by its tool module: core only carries it along,
 * and it is checked here, once, at start-up.
 */

/** Thrown at start-up; the message names the offending setting. */
export class StateConfigError extends Error {}

export const STATE_SETTINGS = Symbol('STATE_SETTINGS');

export const DEFAULT_SOCKET_CACHE_SIZE = 8;
export const DEFAULT_COMPACTION_KEEP_ITEMS = 2;
/** Short keys make the signature guessable; 16 characters is a floor, not a recommendation. */
const MIN_KEY_LENGTH = 16;

/** `state.background`: how many background responses may run, and how a crashed gateway's runs are found. */
export class BackgroundSettings {
  /** Live background runs across every gateway sharing the store; past it, create answers 429. */
  @IsInt() @Min(1) @Max(1_000_000) maxRuns = 256;
  @IsInt() @Min(1) @Max(1_000_000) maxRunsPerOwner = 32;
  /**
   * A running gateway renews its runs' leases every third of this; a run whose
   * lease lapses (its gateway crashed) is ended `failed` by whichever gateway
   * notices first.
   */
  @IsInt() @Min(300) @Max(3_600_000) leaseMs = 30_000;
  /** How often a stream follower re-reads the store when no notification came (SQLite across processes). */
  @IsInt() @Min(10) @Max(60_000) pollMs = 1_000;
}

export class StateSettings {
  /**
   * Signs compaction items (HMAC-SHA256) so that clients cannot hand the
   * model a summary the gateway never wrote. Every replica behind one load
   * balancer needs the same key; without one, items are unsigned.
   */
  @IsOptional() @IsString() @MinLength(MIN_KEY_LENGTH) compactionKey: string | null = null;
  /** Responses a WebSocket remembers for `previous_response_id` (store:false continuations). */
  @IsInt() @Min(1) @Max(1000) socketCacheSize = DEFAULT_SOCKET_CACHE_SIZE;
  /** Most recent transcript items a compaction keeps verbatim. */
  @IsInt() @Min(0) @Max(100) compactionKeepItems = DEFAULT_COMPACTION_KEEP_ITEMS;
  @IsObject() @ValidateNested() @Type(() => BackgroundSettings) background = new BackgroundSettings();
}

export const DEFAULT_BACKGROUND_SETTINGS: BackgroundSettings = Object.freeze(new BackgroundSettings());

/** The `state` section: compaction, the WebSocket cache, background runs. */
export const stateConfigSection = defineConfigSection({
  key: 'state',
  type: StateSettings,
  token: STATE_SETTINGS,
  env: [
    { env: 'COMPACTION_KEY', path: 'compactionKey', kind: 'string', secret: true },
    { env: 'BACKGROUND_MAX_RUNS', path: 'background.maxRuns', kind: 'int' },
    { env: 'BACKGROUND_MAX_RUNS_PER_OWNER', path: 'background.maxRunsPerOwner', kind: 'int' },
    { env: 'BACKGROUND_LEASE_MS', path: 'background.leaseMs', kind: 'int' },
  ],
  // `null` in a file means "the default", as it did before the section had a class.
  nullMeansDefault: true,
});

export function readStateSettings(config: GatewayConfig): StateSettings {
  try {
    return stateConfigSection.read(config);
  } catch (err) {
    throw new StateConfigError((err as Error).message);
  }
}
