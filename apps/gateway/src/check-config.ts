import type { GatewayConfig } from '#config/gateway-config.js';
import { readStateSettings } from '#state/config/state-settings.js';
import { parseMcpSettings } from '#tools/mcp/mcp.config.js';
import { parseWebSearchSettings } from '#tools/web-search/config/web-search-settings.js';
import { providerRequirements } from '#tools/web-search/providers/search-provider.registry.js';

/**
 * The sections the built-in modules validate themselves (`mcp`, `webSearch`,
 * `state`), checked with the same parsers they use at boot, so that
 * `check-config` finds what starting the gateway would.
 */
export function checkToolSections(config: GatewayConfig): string[] {
  const checks: Array<() => unknown> = [
    () => parseMcpSettings(config.mcp),
    () => parseWebSearchSettings(config.webSearch, providerRequirements()),
    () => readStateSettings(config),
  ];
  const problems: string[] = [];
  for (const check of checks) {
    try {
      check();
    } catch (err) {
      const lines = (err instanceof Error ? err.message : String(err)).split('\n').map((l) => l.trim());
      const details = lines.slice(1).filter(Boolean);
      problems.push(...(details.length > 0 ? details : lines.filter(Boolean)));
    }
  }
  return problems;
}
