/**
 * The `webSearch` section of the gateway config, owned by this module.
 * Core only guarantees it is a plain object; everything else is checked here,
 * once, when the module starts, so a typo fails the boot instead of the first
 * search.
 */

/** Thrown at start-up; the message names the offending setting. */
export class WebSearchConfigError extends Error {}

export const WEB_SEARCH_SETTINGS = Symbol('WEB_SEARCH_SETTINGS');

export interface ProviderEndpoint {
  baseUrl: string;
  apiKey?: string;
  /** Tavily only: also send the key as `api_key` in the body, for deployments predating bearer auth. */
  apiKeyInBody?: boolean;
}

export interface WebSearchSettings {
  /** The provider searches go to; `null` when web search is not configured. */
  provider: string | null;
  /** Endpoint of the selected provider (defaults filled in). */
  endpoint: ProviderEndpoint | null;
  /** Requests in flight at once to the provider, across all gateway requests. */
  maxConcurrentQueries: number;
  /** Deadline of one `web_search` call, all of its queries included. */
  timeoutMs: number | undefined;
  /** Characters of results the model reads per call. */
  resultBudgetChars: number;
  /** Queries one call may run; extra ones the model asks for are ignored. */
  maxQueriesPerCall: number;
}

/** What each provider needs in its config section. */
export interface ProviderRequirements {
  /** The real public endpoint; absent when the service is self-hosted only. */
  defaultBaseUrl?: string;
  requiresApiKey: boolean;
}

export const DEFAULT_MAX_CONCURRENT_QUERIES = 4;
export const DEFAULT_RESULT_BUDGET_CHARS = 6000;
export const DEFAULT_MAX_QUERIES_PER_CALL = 5;

export const TOP_LEVEL_KEYS = new Set(['provider', 'maxConcurrentQueries', 'timeoutMs', 'resultBudgetChars', 'maxQueriesPerCall']);
export const ENDPOINT_KEYS = new Set(['baseUrl', 'apiKey', 'apiKeyInBody']);

function fail(setting: string, message: string, value?: unknown): never {
  const got = value === undefined ? '' : ` (got ${JSON.stringify(value)})`;
  throw new WebSearchConfigError(`Invalid configuration: webSearch.${setting}: ${message}${got}`);
}

function integer(raw: Record<string, unknown>, key: string, min: number, max: number, fallback: number): number;
function integer(raw: Record<string, unknown>, key: string, min: number, max: number, fallback: undefined): number | undefined;
function integer(raw: Record<string, unknown>, key: string, min: number, max: number, fallback: number | undefined): number | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(key, `must be an integer from ${min} to ${max}`, value);
  }
  return value;
}

function endpoint(raw: unknown, name: string, req: ProviderRequirements): ProviderEndpoint {
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) {
    fail(name, 'must be an object like { "baseUrl": "...", "apiKey": "..." }', raw);
  }
  const section = (raw ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(section)) {
    if (!ENDPOINT_KEYS.has(key)) fail(`${name}.${key}`, `is not a setting (known: ${[...ENDPOINT_KEYS].join(', ')})`);
  }
  const baseUrl = section.baseUrl ?? req.defaultBaseUrl;
  if (baseUrl === undefined) fail(`${name}.baseUrl`, `is required: ${name} has no public endpoint, point it at your instance`);
  if (typeof baseUrl !== 'string' || !/^https?:\/\/[^/\s]+/i.test(baseUrl)) fail(`${name}.baseUrl`, 'must be an http(s) URL', baseUrl);
  try {
    new URL(baseUrl);
  } catch {
    fail(`${name}.baseUrl`, 'must be an http(s) URL', baseUrl);
  }
  const apiKey = section.apiKey;
  if (apiKey !== undefined && apiKey !== null && (typeof apiKey !== 'string' || apiKey.length === 0)) {
    fail(`${name}.apiKey`, 'must be a non-empty string');
  }
  if (req.requiresApiKey && (typeof apiKey !== 'string' || apiKey.length === 0)) {
    fail(`${name}.apiKey`, `is required for provider "${name}"`);
  }
  const inBody = section.apiKeyInBody;
  if (inBody !== undefined && typeof inBody !== 'boolean') fail(`${name}.apiKeyInBody`, 'must be a boolean', inBody);
  return {
    // Joined with paths later: one trailing slash or none must give the same URL.
    baseUrl: baseUrl.replace(/\/+$/, ''),
    ...(typeof apiKey === 'string' ? { apiKey } : {}),
    ...(inBody ? { apiKeyInBody: true } : {}),
  };
}

/**
 * Validates `config.webSearch`. `providers` maps each known provider name to
 * what its section needs; a section is accepted for every known provider (so a
 * config can carry several and switch with `provider`), but only the selected
 * one must be complete.
 */
export function parseWebSearchSettings(raw: unknown, providers: ReadonlyMap<string, ProviderRequirements>): WebSearchSettings {
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) {
    throw new WebSearchConfigError(`Invalid configuration: webSearch must be an object (got ${JSON.stringify(raw)})`);
  }
  const section = (raw ?? {}) as Record<string, unknown>;
  const names = [...providers.keys()];
  for (const key of Object.keys(section)) {
    if (!TOP_LEVEL_KEYS.has(key) && !providers.has(key)) {
      fail(key, `is not a setting (known: ${[...TOP_LEVEL_KEYS, ...names].join(', ')})`);
    }
  }
  const settings: WebSearchSettings = {
    provider: null,
    endpoint: null,
    maxConcurrentQueries: integer(section, 'maxConcurrentQueries', 1, 256, DEFAULT_MAX_CONCURRENT_QUERIES),
    timeoutMs: integer(section, 'timeoutMs', 100, 600_000, undefined),
    resultBudgetChars: integer(section, 'resultBudgetChars', 500, 1_000_000, DEFAULT_RESULT_BUDGET_CHARS),
    maxQueriesPerCall: integer(section, 'maxQueriesPerCall', 1, 20, DEFAULT_MAX_QUERIES_PER_CALL),
  };
  const endpoints = new Map<string, ProviderEndpoint>();
  for (const [name, req] of providers) {
    if (section[name] !== undefined && section[name] !== null) endpoints.set(name, endpoint(section[name], name, req));
  }
  const provider = section.provider;
  if (provider === undefined || provider === null || provider === '') return settings;
  if (typeof provider !== 'string' || !providers.has(provider)) fail('provider', `must be one of ${names.join(', ')}`, provider);
  settings.provider = provider;
  settings.endpoint = endpoints.get(provider) ?? endpoint(undefined, provider, providers.get(provider)!);
  return settings;
}
