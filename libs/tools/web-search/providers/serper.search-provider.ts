import type { ProviderEndpoint, ProviderRequirements } from '../config/web-search-settings.js';
import { withSiteOperators } from '../search/domain-filter.js';
import { countryName } from '../search/search-location.js';
import { arrayField, objectBody, requestJson, resultOf } from './provider-http.js';
import type { SearchOptions, SearchProvider, SearchResult } from './search-provider.interface.js';

/** Google's own limit for `num`. */
const MAX_NUM = 100;

/**
 * Serper (Google results): `POST /search` with `X-API-KEY`, body
 * `{q, num, gl, hl, location}`; hits are in `organic[]`.
 * https://serper.dev
 */
export class SerperSearchProvider implements SearchProvider {
  static readonly requirements: ProviderRequirements = { defaultBaseUrl: 'https://google.serper.dev', requiresApiKey: true };
  readonly name = 'serper';

  constructor(private readonly endpoint: ProviderEndpoint) {}

  async search(query: string, options: SearchOptions, signal: AbortSignal): Promise<SearchResult[]> {
    const body: Record<string, unknown> = {
      q: withSiteOperators(query, options.allowedDomains, 2048, options.blockedDomains),
      num: Math.min(Math.max(options.count, 1), MAX_NUM),
    };
    if (options.country) body.gl = options.country.toLowerCase();
    if (options.language) body.hl = options.language;
    // Google localizes by a canonical place name; only a city makes it more precise than `gl`.
    if (options.city) {
      body.location = [options.city, options.region, options.country ? countryName(options.country) : undefined].filter(Boolean).join(', ');
    }
    const answer = objectBody(
      this.name,
      await requestJson({
        provider: this.name,
        method: 'POST',
        url: new URL(`${this.endpoint.baseUrl}/search`),
        headers: { 'x-api-key': this.endpoint.apiKey ?? '' },
        body,
        signal,
        deadline: options.deadline,
      }),
    );
    // No hits: Serper leaves `organic` out.
    const results = arrayField(this.name, answer.organic, 'organic', true);
    return results.flatMap((r) => {
      const item = (r ?? {}) as Record<string, unknown>;
      return resultOf(item.title, item.link, item.snippet, item.date) ?? [];
    });
  }
}
