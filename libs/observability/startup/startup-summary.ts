import { resolve } from 'node:path';
import type { GatewayConfig } from '#config/gateway-config.js';
import { OWNER_SECRET_FILE } from '#config/owner-ids.js';
import { redactUrl as redactConfiguredUrl } from '#config/url-redaction.js';
import type { ToolHandlerExplorer } from '#core/handlers/tool-handler.explorer.js';
import { readStorageSettings } from '#storage/config/storage.config-section.js';
import { driverInstalled } from '#storage/sql/sql-database.js';
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
      return { driver: storage.driver, location: 'process memory (lost on restart, not shared between replicas)', limits: memoryDriverLimits(driverInstalled('better-sqlite3')) };
  }
}

/**
 * What the memory driver cannot keep on its own: batches and the file-search
 * index live in an in-memory SQLite database, which needs better-sqlite3.
 * Without it those surfaces refuse (503 `driver_missing`) rather than accept
 * what they could not keep; the summary says so before anyone tries.
 */
export function memoryDriverLimits(betterSqlite3: boolean): string {
  return betterSqlite3
    ? 'batches and the file-search index in an in-memory SQLite database (better-sqlite3) of this process'
    : 'batches and file search unavailable: they need the package better-sqlite3 (npm install better-sqlite3); their routes answer 503 driver_missing';
}

/**
 * Each tool type and what this gateway does with it, with the reason when it
 * cannot run it: the question an operator has when a model's call fails.
 * Each module says it of its own type (`ToolHandler.describe`); the summary
 * names no tool type. A type the configuration refuses when no module
 * handles it (`tools.refuseUnhandledTypes`) is listed when none is loaded.
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
  const aliases = new Set<string>();
  for (const type of loaded) {
    const handler = explorer.handlerForType(type)!;
    const { runs, detail } = typeStatus(type, handler, explorer);
    (runs ? active : inactive)[type] = detail;
    // A declaration under an alias (`web_search_preview`) is the same tool: it runs, or not, as its type does.
    for (const alias of handler.aliases ?? []) {
      aliases.add(alias);
      (runs ? active : inactive)[alias] = `an alias of ${type}: ${detail}`;
    }
  }
  for (const type of config.tools.refuseUnhandledTypes ?? []) {
    if (!loaded.has(type) && !aliases.has(type)) inactive[type] = 'no loaded tool module handles it: a declaration is refused with a 400 naming the type';
  }
  return { active, inactive };
}

function typeStatus(
  type: string,
  handler: NonNullable<ReturnType<ToolHandlerExplorer['handlerForType']>>,
  explorer: Pick<ToolHandlerExplorer, 'executorForType'>,
): { runs: boolean; detail: string } {
  if (!handler.gatewayOwned) return { runs: true, detail: handler.describe?.().detail ?? 'client-owned: calls are handed back to the client' };
  if (!explorer.executorForType(type)) {
    return { runs: false, detail: 'declared but no executor in this gateway: it is not offered to the model, and a call gets an error result' };
  }
  return handler.describe?.() ?? { runs: true, detail: 'runs in the gateway' };
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
    // Where the key of owner ids comes from (never the secret): replicas must agree on it.
    ...(apiKeys > 0
      ? {
          owner_ids: `HMAC-SHA256, secret ${config.server.ownerIdSecret ? 'from OWNER_ID_SECRET (server.ownerIdSecret)' : `in ${resolve(config.server.dataDir, OWNER_SECRET_FILE)}`}`,
        }
      : {}),
    tools: toolSummary(config, explorer),
    metrics: observability.metrics ? '/metrics' : 'off',
    tracing: observability.otlpTracesUrl ? redactUrl(observability.otlpTracesUrl) : 'off (set OTEL_EXPORTER_OTLP_ENDPOINT)',
    shutdown_grace_ms: config.server.shutdownGraceMs,
  };
}
