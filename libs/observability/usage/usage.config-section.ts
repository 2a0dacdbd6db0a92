import { IsArray, IsBoolean, IsString } from 'class-validator';
import { defineConfigSection } from '#config/config-section.js';

/** The `usage` section: per-owner token usage kept in the store, and who may read everyone's. */
export class UsageConfig {
  /** Record each run's tokens in the usage store (the state's database). */
  @IsBoolean() record = true;
  /**
   * Administrator keys: `GET /v1/usage` with one of these reports every
   * owner's usage, not only the caller's. Each must also be an accepted key
   * (`auth.apiKeys`), since every route needs one.
   */
  @IsArray() @IsString({ each: true }) adminKeys: string[] = [];
}

/** Nest token for the validated `usage` section. */
export const USAGE_SETTINGS = Symbol('USAGE_SETTINGS');

export const usageConfigSection = defineConfigSection({
  key: 'usage',
  type: UsageConfig,
  token: USAGE_SETTINGS,
  env: [
    { env: 'USAGE_RECORD', path: 'record', kind: 'bool' },
    { env: 'USAGE_ADMIN_KEYS', path: 'adminKeys', kind: 'list', secret: true },
  ],
});
