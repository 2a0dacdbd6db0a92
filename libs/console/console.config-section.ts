import { IsBoolean } from 'class-validator';
import { classSectionKeys, defineClassSection } from '#config/class-config-section.js';

/**
 * The `console` section: the operator's web console under `/console`. Off by
 * default; when on, it answers only the administrator keys of
 * `usage.adminKeys` (one notion of administrator for the whole gateway), so
 * turning it on without any is refused at start-up.
 */
export class ConsoleConfig {
  @IsBoolean() enabled = false;
}

/** Nest token for the validated `console` section. */
export const CONSOLE_SETTINGS = Symbol('CONSOLE_SETTINGS');

export const consoleConfigSection = defineClassSection({
  key: 'console',
  type: ConsoleConfig,
  token: CONSOLE_SETTINGS,
  env: [{ env: 'CONSOLE_ENABLED', path: 'enabled', kind: 'bool' }],
  keys: classSectionKeys(ConsoleConfig) as Record<string, true>,
});
