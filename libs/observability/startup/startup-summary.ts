import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type { GatewayConfig } from '#config/gateway-config.js';
import { redactUrl as redactConfiguredUrl } from '#config/url-redaction.js';
import type { ToolHandlerExplorer } from '#core/handlers/tool-handler.explorer.js';
import { readStorageSettings } from '#storage/config/storage.config-section.js';
import { ToolType } from '#tools/tool-type.enum.js';
import { readObservabilitySettings } from '../config/observability.config-section.js';
import type { LogFields } from '../logging/log-writer.service.js';

/** A URL fit for a log: the one redaction every place that shows a URL uses (`libs/config/url-redaction.ts`). */
export function redactUrl(raw: string | undefined): string | undefined {
  if (!raw) return raw;
  // A log line never shows what it cannot parse: a malformed URL may still carry a password.
  return URL.canParse(raw) ? redactConfiguredUrl(raw) : '(unparseable URL)';
}

export function storageSummary(config: GatewayConfig): LogFields {
  const storage = readStorageSettings(config);
  switch (storage.driver) {
    case 'sqlite':
      return { driver: 'sqlite', location: storage.sqlitePath === ':memory:' ? ':memory:' : resolve(storage.sqlitePath) };
    case 'postgres':
      return { driver: 'postgres', location: redactUrl(storage.postgresUrl) };
    default:
      return { driver: storage.driver, location: 'process memory (lost on restart, not shared between replicas)' };
  }
}

const requireDriver = createRequire(import.meta.url);

/** Whether an optional peer (a database driver) is installed where the gateway runs. */
function installed(pkg: string): boolean {
  try {
    requireDriver.resolve(pkg);
    return true;
  } catch {
    return false;
  }
}

/**
 * File search keeps its index in a database of its own kind: PostgreSQL with
 * the postgres driver, else SQLite (`:memory:` under the memory driver), so
 * `storage.driver: memory` still needs better-sqlite3 for it.
 */
function fileSearchDriverMissing(config: GatewayConfig): string | undefined {
  const driver = readStorageSettings(config).driver;
  const pkg = driver === 'postgres' ? 'pg' : 'better-sqlite3';
  if (installed(pkg)) return undefined;
  const where = driver === 'postgres' ? 'PostgreSQL' : driver === 'memory' ? "SQLite (':memory:' under storage.driver memory)" : 'SQLite';
  return `needs the package ${pkg} (file search keeps its index in ${where}): npm install ${pkg}; until then its routes and calls answer 503 driver_missing`;
}

/**
 * Each tool type and what this gateway does with it, with the reason when it
 * cannot run it: the question an operator has when a model's call fails.
 */
export function toolSummary(
  config: GatewayConfig,
  explorer: Pick<ToolHandlerExplorer, 'types' | 'handlerForType' | 'executorForType'>,
): {
  active: Record<string, string>;
  inactive: Record<string, string>;
} {
  const active: Record<string, string> = {};
  const inactive: Record<string, string> = {};
  const loaded = new Set(explorer.types());
  for (const type of loaded) {
    const handler = explorer.handlerForType(type)!;
    if (!handler.gatewayOwned) {
      active[type] = 'client-owned: calls are handed back to the client';
      continue;
    }
    if (!explorer.executorForType(type)) {
      inactive[type] = 'declared but no executor in this gateway: it is not offered to the model, and a call gets an error result';
      continue;
    }
    if (type === ToolType.WebSearch && !(config.webSearch as { provider?: string } | undefined)?.provider) {
      inactive[type] = 'no search provider configured (set WEB_SEARCH_PROVIDER or webSearch.provider): calls get a not_configured error result';
      continue;
    }
    if (type === ToolType.Mcp) {
      const servers = ((config.mcp as { servers?: unknown[] } | undefined)?.servers ?? []).length;
      const hosts = ((config.mcp as { allowedHosts?: unknown[] } | undefined)?.allowedHosts ?? []).length;
      active[type] = `runs in the gateway: ${servers} operator server(s); request server_url allowed for ${hosts} host(s) (mcp.allowedHosts)`;
      continue;
    }
    const missing = type === ToolType.FileSearch ? fileSearchDriverMissing(config) : undefined;
    if (missing) {
      inactive[type] = missing;
      continue;
    }
    active[type] = 'runs in the gateway';
  }
  const unhandled =
    config.tools.unhandledTypes === 'skip'
      ? 'declarations are skipped (tools.unhandledTypes: skip), unless listed in tools.refuseUnhandledTypes'
      : 'declarations are refused with a 400 naming the type (tools.unhandledTypes: refuse)';
  for (const type of Object.values(ToolType)) {
    if (!loaded.has(type)) inactive[type] = `its tool module is not loaded in this host: ${unhandled}`;
  }
  return { active, inactive };
}

/** The start-up line: where it listens, what it talks to, what it stores where, which tools run. */
export function startupSummary(config: GatewayConfig, explorer: Pick<ToolHandlerExplorer, 'types' | 'handlerForType' | 'executorForType'>, listen: string): LogFields {
  const observability = readObservabilitySettings(config);
  // The auth section is the state library's; like mcp and webSearch above, the summary only counts what it holds.
  const apiKeys = ((config.auth as { apiKeys?: unknown[] } | undefined)?.apiKeys ?? []).length;
  return {
    listen,
    upstream: {
      url: redactUrl(config.upstream.baseUrl),
      ...((config.upstream.baseUrls?.length ?? 0) > 1 ? { replicas: config.upstream.baseUrls!.map(redactUrl) } : {}),
      dialect: config.upstream.dialect,
      api_key: config.upstream.apiKey ? 'set' : 'none',
      default_model: config.upstream.defaultModel,
    },
    storage: storageSummary(config),
    auth: apiKeys > 0 ? `${apiKeys} API key(s)` : 'off (no API_KEYS)',
    tools: toolSummary(config, explorer),
    metrics: observability.metrics ? '/metrics' : 'off',
    tracing: observability.otlpTracesUrl ? redactUrl(observability.otlpTracesUrl) : 'off (set OTEL_EXPORTER_OTLP_ENDPOINT)',
    shutdown_grace_ms: config.server.shutdownGraceMs,
  };
}
