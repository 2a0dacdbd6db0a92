import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsObject, IsOptional, IsString, Max, Min, MinLength, ValidateBy, ValidateNested } from 'class-validator';
import { type ConfigSection, type SectionEnvSetting, classSectionKeys, defineConfigSection } from '#tool-sdk/index.js';

/**
 * The `webSearch` section of the gateway config, owned by this module and
 * declared with class-validator like every other section: each wrong value
 * is one line, all of them in one pass, when the module starts, so a typo
 * fails the boot instead of the first search.
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

/** An http(s) URL that `new URL` reads (a host name with an underscore, as Docker gives, included). */
function IsHttpUrl(): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isHttpUrl',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && /^https?:\/\/[^/\s]+/i.test(value) && URL.canParse(value),
      },
    },
    { message: 'must be an http(s) URL' },
  );
}

/** One provider's endpoint, as written under its name (`webSearch.brave`). */
export class ProviderEndpointSection {
  /** Unset: the provider's public endpoint, where it has one. */
  @IsOptional() @IsHttpUrl() baseUrl?: string;
  @IsOptional() @IsString() @MinLength(1) apiKey?: string;
  @IsOptional() @IsBoolean() apiKeyInBody?: boolean;
}

/** `webSearch` as written; one `ProviderEndpointSection` per known provider is added by `sectionClassFor`. */
export class WebSearchSection {
  /** Unset or empty: web search is not configured. Checked against the providers in `providerRules`. */
  @IsOptional() @IsString() provider?: string | null;
  @IsOptional() @IsInt() @Min(1) @Max(256) maxConcurrentQueries?: number | null;
  @IsOptional() @IsInt() @Min(100) @Max(600_000) timeoutMs?: number | null;
  @IsOptional() @IsInt() @Min(500) @Max(1_000_000) resultBudgetChars?: number | null;
  @IsOptional() @IsInt() @Min(1) @Max(20) maxQueriesPerCall?: number | null;
}

const ENDPOINT_SHAPE = 'must be an object like { "baseUrl": "...", "apiKey": "..." }';
const sectionClasses = new Map<string, new () => WebSearchSection>();

/**
 * The section class for a set of providers: the top-level settings and, for
 * each provider name, its endpoint as a nested section. Built once per set
 * (the provider registry decides the names, not this file).
 */
function sectionClassFor(names: readonly string[]): new () => WebSearchSection {
  const id = names.join(',');
  let cls = sectionClasses.get(id);
  if (!cls) {
    cls = class extends WebSearchSection {};
    for (const name of names) {
      for (const decorate of [IsOptional(), IsObject({ message: ENDPOINT_SHAPE }), ValidateNested(), Type(() => ProviderEndpointSection)]) decorate(cls.prototype, name);
    }
    sectionClasses.set(id, cls);
  }
  return cls;
}

const endpointOf = (section: WebSearchSection, name: string) => (section as unknown as Record<string, ProviderEndpointSection | null | undefined>)[name] ?? undefined;

/**
 * The rules that tie settings together, in the same pass as the decorators:
 * `provider` names a known provider, and the selected one has what its
 * service needs (a base URL where it has no public one, a key where it asks for one).
 */
function providerRules(providers: ReadonlyMap<string, ProviderRequirements>) {
  return (section: WebSearchSection): string[] => {
    const provider = section.provider;
    if (typeof provider !== 'string' || provider === '') return [];
    const req = providers.get(provider);
    if (!req) return [`webSearch.provider: must be one of ${[...providers.keys()].join(', ')} (got ${JSON.stringify(provider)})`];
    const endpoint = endpointOf(section, provider);
    if (endpoint !== undefined && !(endpoint instanceof ProviderEndpointSection)) return []; // not an object: said by its decorator
    const problems: string[] = [];
    if (endpoint?.baseUrl === undefined && req.defaultBaseUrl === undefined) {
      problems.push(`webSearch.${provider}.baseUrl: is required: ${provider} has no public endpoint, point it at your instance`);
    }
    if (req.requiresApiKey && (endpoint?.apiKey === undefined || endpoint.apiKey === null)) problems.push(`webSearch.${provider}.apiKey: is required for provider "${provider}"`);
    return problems;
  };
}

/** The settings searches use: the selected provider's endpoint with its defaults, and the budgets. */
function resolvedSettings(section: WebSearchSection, providers: ReadonlyMap<string, ProviderRequirements>): WebSearchSettings {
  const settings: WebSearchSettings = {
    provider: null,
    endpoint: null,
    maxConcurrentQueries: section.maxConcurrentQueries ?? DEFAULT_MAX_CONCURRENT_QUERIES,
    timeoutMs: section.timeoutMs ?? undefined,
    resultBudgetChars: section.resultBudgetChars ?? DEFAULT_RESULT_BUDGET_CHARS,
    maxQueriesPerCall: section.maxQueriesPerCall ?? DEFAULT_MAX_QUERIES_PER_CALL,
  };
  const provider = section.provider;
  if (typeof provider !== 'string' || provider === '') return settings;
  const given = endpointOf(section, provider);
  const baseUrl = given?.baseUrl ?? providers.get(provider)!.defaultBaseUrl!;
  settings.provider = provider;
  settings.endpoint = {
    // Joined with paths later: one trailing slash or none must give the same URL.
    baseUrl: baseUrl.replace(/\/+$/, ''),
    ...(typeof given?.apiKey === 'string' ? { apiKey: given.apiKey } : {}),
    ...(given?.apiKeyInBody ? { apiKeyInBody: true } : {}),
  };
  return settings;
}

const WEB_SEARCH_ENV: readonly SectionEnvSetting[] = [{ env: 'WEB_SEARCH_PROVIDER', path: 'provider', kind: 'string' }];

/** The provider's own endpoint and key go under its name, which only the environment knows. */
function providerFromEnv(env: Record<string, string | undefined>): Record<string, unknown> | undefined {
  const provider = env.WEB_SEARCH_PROVIDER;
  if (!provider) return undefined;
  const endpoint = {
    ...(env.WEB_SEARCH_URL ? { baseUrl: env.WEB_SEARCH_URL } : {}),
    ...(env.WEB_SEARCH_API_KEY ? { apiKey: env.WEB_SEARCH_API_KEY } : {}),
  };
  return Object.keys(endpoint).length > 0 ? { [provider]: endpoint } : undefined;
}

const sections = new Map<string, ConfigSection<WebSearchSettings>>();

/**
 * The `webSearch` section for a set of providers: the selected provider, its
 * endpoint, and the per-call budgets. A section is accepted for every known
 * provider (so a config can carry several and switch with `provider`), but
 * only the selected one must be complete.
 */
export function webSearchSection(providers: ReadonlyMap<string, ProviderRequirements>): ConfigSection<WebSearchSettings> {
  const names = [...providers.keys()];
  const id = names.join(',');
  let section = sections.get(id);
  if (!section) {
    const endpoint = classSectionKeys(ProviderEndpointSection);
    section = defineConfigSection({
      key: 'webSearch',
      type: sectionClassFor(names),
      token: WEB_SEARCH_SETTINGS,
      env: WEB_SEARCH_ENV,
      fromEnv: providerFromEnv,
      secretEnv: ['WEB_SEARCH_API_KEY'],
      // Each provider's endpoint is checked against its own keys.
      keys: { ...classSectionKeys(WebSearchSection), ...Object.fromEntries(names.map((name) => [name, endpoint])) },
      check: providerRules(providers),
      settings: (written) => resolvedSettings(written, providers),
    });
    sections.set(id, section);
  }
  return section;
}

/** Validates a raw `webSearch` section (see `webSearchSection`), outside the Nest container. */
export function parseWebSearchSettings(raw: unknown, providers: ReadonlyMap<string, ProviderRequirements>): WebSearchSettings {
  try {
    return webSearchSection(providers).parse(raw ?? undefined);
  } catch (err) {
    throw new WebSearchConfigError((err as Error).message);
  }
}
