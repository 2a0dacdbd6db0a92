import { InvalidRequestError, type JsonObject, optionalBoolean, optionalObject, optionalString, optionalStringArray } from '#tool-sdk/index.js';
import { normalizeDomain } from './search/domain-filter.js';

export type SearchContextSize = 'low' | 'medium' | 'high';

export interface ApproximateLocation {
  /** ISO 3166-1 alpha-2, upper case. */
  country?: string;
  region?: string;
  city?: string;
  /** IANA time zone. */
  timezone?: string;
}

/** A validated `web_search` declaration: the executor's per-entry parameters. */
export interface WebSearchParams {
  contextSize: SearchContextSize;
  userLocation?: ApproximateLocation;
  /** Normalized host names; absent when the declaration does not filter. */
  allowedDomains?: string[];
  /** Normalized host names whose results (their subdomains' too) are dropped; absent when none. */
  blockedDomains?: string[];
  /** `false`: no live web access (Codex's cached mode). Every provider here is live, so no search runs. */
  externalWebAccess?: boolean;
}

/** How many results each query asks for: OpenAI's context sizes as result counts. */
export const RESULTS_PER_CONTEXT_SIZE: Record<SearchContextSize, number> = { low: 3, medium: 5, high: 10 };

const CONTEXT_SIZES = Object.keys(RESULTS_PER_CONTEXT_SIZE);
/** OpenAI accepts up to 100 domains in each list. */
const MAX_FILTER_DOMAINS = 100;
const MAX_PLACE_CHARS = 200;

function place(location: JsonObject, field: string, path: string): string | undefined {
  const value = optionalString(location, field, path)?.trim();
  if (value === undefined || value === '') return undefined;
  if (value.length > MAX_PLACE_CHARS) {
    throw new InvalidRequestError(`${path}.${field} must be at most ${MAX_PLACE_CHARS} characters.`, `${path}.${field}`);
  }
  return value;
}

function validateLocation(decl: JsonObject, path: string): ApproximateLocation | undefined {
  const location = optionalObject(decl, 'user_location', path);
  if (!location) return undefined;
  const at = `${path}.user_location`;
  if (location.type !== undefined && location.type !== null && location.type !== 'approximate') {
    throw new InvalidRequestError(`${at}.type must be "approximate".`, `${at}.type`);
  }
  const result: ApproximateLocation = {};
  const country = place(location, 'country', at);
  if (country !== undefined) {
    if (!/^[A-Za-z]{2}$/.test(country)) {
      throw new InvalidRequestError(`${at}.country must be a two-letter ISO 3166-1 country code such as "US".`, `${at}.country`);
    }
    result.country = country.toUpperCase();
  }
  const region = place(location, 'region', at);
  if (region !== undefined) result.region = region;
  const city = place(location, 'city', at);
  if (city !== undefined) result.city = city;
  const timezone = place(location, 'timezone', at);
  if (timezone !== undefined) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: timezone });
    } catch {
      throw new InvalidRequestError(`${at}.timezone must be an IANA time zone such as "America/Chicago".`, `${at}.timezone`);
    }
    result.timezone = timezone;
  }
  return Object.keys(result).length > 0 ? result : undefined;
}

type DomainList = 'allowed_domains' | 'blocked_domains';

function validateDomainList(filters: JsonObject, field: DomainList, at: string): string[] | undefined {
  const listed = optionalStringArray(filters, field, at);
  if (!listed || listed.length === 0) return undefined;
  if (listed.length > MAX_FILTER_DOMAINS) {
    throw new InvalidRequestError(`${at}.${field} may list at most ${MAX_FILTER_DOMAINS} domains.`, `${at}.${field}`);
  }
  const domains = listed.map((raw, i) => {
    const domain = normalizeDomain(raw);
    if (!domain) {
      throw new InvalidRequestError(`${at}.${field}[${i}] "${raw}" is not a domain name such as "example.com".`, `${at}.${field}[${i}]`);
    }
    return domain;
  });
  return [...new Set(domains)];
}

/** `filters`: both lists may be given; a result must pass the allow list (when there is one) and miss the block list. */
function validateDomains(decl: JsonObject, path: string): Pick<WebSearchParams, 'allowedDomains' | 'blockedDomains'> {
  const filters = optionalObject(decl, 'filters', path);
  if (!filters) return {};
  const at = `${path}.filters`;
  const allowedDomains = validateDomainList(filters, 'allowed_domains', at);
  const blockedDomains = validateDomainList(filters, 'blocked_domains', at);
  return { ...(allowedDomains ? { allowedDomains } : {}), ...(blockedDomains ? { blockedDomains } : {}) };
}

/** Validates one `web_search` declaration; every error names its field path. */
export function validateWebSearchDeclaration(decl: JsonObject, path: string): WebSearchParams {
  const size = decl.search_context_size;
  let contextSize: SearchContextSize = 'medium';
  if (size !== undefined && size !== null) {
    if (typeof size !== 'string' || !CONTEXT_SIZES.includes(size)) {
      throw new InvalidRequestError(`${path}.search_context_size must be one of "low", "medium", "high".`, `${path}.search_context_size`);
    }
    contextSize = size as SearchContextSize;
  }
  const params: WebSearchParams = { contextSize };
  const userLocation = validateLocation(decl, path);
  if (userLocation) params.userLocation = userLocation;
  Object.assign(params, validateDomains(decl, path));
  const externalWebAccess = optionalBoolean(decl, 'external_web_access', path);
  if (externalWebAccess !== undefined) params.externalWebAccess = externalWebAccess;
  return params;
}
