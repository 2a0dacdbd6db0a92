import type { ProviderEndpoint, ProviderRequirements } from '../config/web-search-settings.js';
import { withSiteOperators } from '../search/domain-filter.js';
import { arrayField, objectBody, requestJson, resultOf } from './provider-http.js';
import type { SearchOptions, SearchProvider, SearchResult } from './search-provider.interface.js';

/** Brave caps `count` at 20 for web search. */
const MAX_COUNT = 20;
/** Brave rejects queries over 400 characters. */
const MAX_QUERY_CHARS = 400;
/** Header values must be ByteStrings; non-ASCII city names are left out rather than mangled. */
const HEADER_SAFE = /^[\x20-\x7e]+$/;

/**
 * Brave's `search_lang` uses script or region variants for a few languages
 * where the bare subtag is ambiguous.
 */
function braveLanguage(language: string, country?: string): string {
  if (language === 'zh') return country === 'TW' || country === 'HK' || country === 'MO' ? 'zh-hant' : 'zh-hans';
  if (language === 'pt') return country === 'BR' ? 'pt-br' : 'pt-pt';
  if (language === 'en' && country === 'GB') return 'en-gb';
  return language;
}

/**
 * Brave Search web API: `GET /res/v1/web/search?q=&count=&country=&search_lang=`
 * with the key in `X-Subscription-Token`; location hints go in `X-Loc-*` headers.
 * https://api-dashboard.search.brave.com/app/documentation/web-search/get-started
 */
export class BraveSearchProvider implements SearchProvider {
  static readonly requirements: ProviderRequirements = { defaultBaseUrl: 'https://api.search.brave.com', requiresApiKey: true };
  readonly name = 'brave';

  constructor(private readonly endpoint: ProviderEndpoint) {}

  async search(query: string, options: SearchOptions, signal: AbortSignal): Promise<SearchResult[]> {
    const url = new URL(`${this.endpoint.baseUrl}/res/v1/web/search`);
    url.searchParams.set('q', withSiteOperators(query, options.allowedDomains, MAX_QUERY_CHARS, options.blockedDomains));
    url.searchParams.set('count', String(Math.min(Math.max(options.count, 1), MAX_COUNT)));
    if (options.country) url.searchParams.set('country', options.country);
    if (options.language) url.searchParams.set('search_lang', braveLanguage(options.language, options.country));
    const headers: Record<string, string> = { 'x-subscription-token': this.endpoint.apiKey ?? '' };
    const loc: Array<[string, string | undefined]> = [
      ['x-loc-city', options.city],
      ['x-loc-state-name', options.region],
      ['x-loc-country', options.country],
      ['x-loc-timezone', options.timezone],
    ];
    for (const [name, value] of loc) if (value && HEADER_SAFE.test(value)) headers[name] = value;

    const body = objectBody(this.name, await requestJson({ provider: this.name, method: 'GET', url, headers, signal, deadline: options.deadline }));
    // A query with no web hits comes back without the `web` section at all.
    const web = body.web as { results?: unknown } | undefined;
    const results = arrayField(this.name, web?.results, 'web.results', web === undefined);
    return results.flatMap((r) => {
      const item = (r ?? {}) as Record<string, unknown>;
      return resultOf(item.title, item.url, item.description, item.page_age ?? item.age) ?? [];
    });
  }
}
