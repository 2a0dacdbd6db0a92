import { IsBoolean } from 'class-validator';
import { defineConfigSection } from '#config/config-section.js';
import type { GatewayConfig } from '#config/gateway-config.js';

/**
 * The `console` section: the operator's web console under `/console`. Off by
 * default; when on, it answers only the administrator keys of
 * `usage.adminKeys` (one notion of administrator for the whole gateway), so
 * turning it on without any is refused by the configuration's validation,
 * which `check-config` and the boot both run.
 */
export class ConsoleConfig {
  @IsBoolean() enabled = false;
}

/** Nest token for the validated `console` section. */
export const CONSOLE_SETTINGS = Symbol('CONSOLE_SETTINGS');

export const CONSOLE_WITHOUT_ADMIN_KEY = 'console.enabled (CONSOLE_ENABLED) is true but usage.adminKeys (USAGE_ADMIN_KEYS) names no administrator key to open it with.';

/** The administrator keys the (not yet validated) `usage` section names: its own validation reports a wrong shape. */
function adminKeysOf(config: GatewayConfig | undefined): unknown[] {
  const keys = (config as { usage?: { adminKeys?: unknown } } | undefined)?.usage?.adminKeys;
  return Array.isArray(keys) ? keys.filter((k) => typeof k === 'string' && k !== '') : [];
}

export const consoleConfigSection = defineConfigSection({
  key: 'console',
  type: ConsoleConfig,
  token: CONSOLE_SETTINGS,
  env: [{ env: 'CONSOLE_ENABLED', path: 'enabled', kind: 'bool' }],
  // A console nobody can open is a mistake in the configuration, found where every other one is.
  check: (settings, config) => (settings.enabled === true && config && adminKeysOf(config).length === 0 ? [CONSOLE_WITHOUT_ADMIN_KEY] : []),
});
