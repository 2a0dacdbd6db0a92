import type { ProviderEndpoint, ProviderRequirements } from '../config/web-search-settings.js';
import { withSiteOperators } from '../search/domain-filter.js';
import { arrayField, objectBody, requestJson, resultOf } from './provider-http.js';
import { SearchProviderError } from './search-provider.error.js';
import type { SearchOptions, SearchProvider, SearchResult } from './search-provider.interface.js';

/**
 * SearXNG's JSON API: `GET /search?q=&format=json&language=&pageno=`.
 * https://docs.searxng.org/dev/search_api.html
 *
 * SearXNG has no count parameter (a page is whatever its engines return) and
 * no domain filter beyond the `site:` syntax it forwards to engines.
 */
export class SearxngSearchProvider implements SearchProvider {
  /** Self-hosted only: there is no public endpoint to default to, and no key. */
  static readonly requirements: ProviderRequirements = { requiresApiKey: false };
  readonly name = 'searxng';

  constructor(private readonly endpoint: ProviderEndpoint) {}

  async search(query: string, options: SearchOptions, signal: AbortSignal): Promise<SearchResult[]> {
    const url = new URL(`${this.endpoint.baseUrl}/search`);
    url.searchParams.set('q', withSiteOperators(query, options.allowedDomains, undefined, options.blockedDomains));
    url.searchParams.set('format', 'json');
    url.searchParams.set('pageno', '1');
    if (options.language) url.searchParams.set('language', options.country ? `${options.language}-${options.country}` : options.language);
    // SearXNG itself has no auth; a key is for instances behind an authenticating proxy.
    const headers: Record<string, string> = this.endpoint.apiKey ? { authorization: `Bearer ${this.endpoint.apiKey}` } : {};
    let body: unknown;
    try {
      body = await requestJson({ provider: this.name, method: 'GET', url, headers, signal, deadline: options.deadline });
    } catch (err) {
      // The classic misconfiguration: the instance serves HTML only and refuses format=json with a 403.
      if (err instanceof SearchProviderError && err.providerStatus === 403) {
        throw new SearchProviderError(`${err.message} (is "json" enabled in the instance's search.formats?)`, this.name, err.kind, err.providerStatus);
      }
      throw err;
    }
    const results = arrayField(this.name, objectBody(this.name, body).results, 'results');
    return results.flatMap((r) => {
      const item = (r ?? {}) as Record<string, unknown>;
      return resultOf(item.title, item.url, item.content, item.publishedDate) ?? [];
    });
  }
}
