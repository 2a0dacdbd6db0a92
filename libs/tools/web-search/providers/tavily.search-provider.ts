import type { ProviderEndpoint, ProviderRequirements } from '../config/web-search-settings.js';
import { countryName } from '../search/search-location.js';
import { arrayField, objectBody, requestJson, resultOf } from './provider-http.js';
import type { SearchOptions, SearchProvider, SearchResult } from './search-provider.interface.js';

const MAX_RESULTS = 20;

/**
 * Tavily: `POST /search` with `Authorization: Bearer`, body
 * `{query, max_results, include_domains, exclude_domains, search_depth, topic, country}`.
 * https://docs.tavily.com/documentation/api-reference/endpoint/search
 *
 * Tavily filters domains itself (`include_domains`, `exclude_domains`) and takes the country as
 * its lower-case English name, boosting (not restricting) results from there.
 */
export class TavilySearchProvider implements SearchProvider {
  static readonly requirements: ProviderRequirements = { defaultBaseUrl: 'https://api.tavily.com', requiresApiKey: true };
  readonly name = 'tavily';

  constructor(private readonly endpoint: ProviderEndpoint) {}

  async search(query: string, options: SearchOptions, signal: AbortSignal): Promise<SearchResult[]> {
    const body: Record<string, unknown> = {
      query,
      max_results: Math.min(Math.max(options.count, 1), MAX_RESULTS),
      search_depth: options.depth,
      topic: 'general',
    };
    if (options.allowedDomains && options.allowedDomains.length > 0) body.include_domains = [...options.allowedDomains];
    if (options.blockedDomains && options.blockedDomains.length > 0) body.exclude_domains = [...options.blockedDomains];
    const country = options.country ? countryName(options.country) : undefined;
    if (country) body.country = country.toLowerCase();
    // Deployments from before bearer auth read the key from the body.
    if (this.endpoint.apiKeyInBody) body.api_key = this.endpoint.apiKey;

    const answer = objectBody(
      this.name,
      await requestJson({
        provider: this.name,
        method: 'POST',
        url: new URL(`${this.endpoint.baseUrl}/search`),
        headers: { authorization: `Bearer ${this.endpoint.apiKey ?? ''}` },
        body,
        signal,
        deadline: options.deadline,
      }),
    );
    const results = arrayField(this.name, answer.results, 'results');
    return results.flatMap((r) => {
      const item = (r ?? {}) as Record<string, unknown>;
      return resultOf(item.title, item.url, item.content, item.published_date) ?? [];
    });
  }
}
