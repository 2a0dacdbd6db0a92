import { Inject, Injectable, Optional } from '@nestjs/common';
import { WEB_SEARCH_SETTINGS, type WebSearchSettings } from '../config/web-search-settings.js';
import { SearchProviderError } from '../providers/search-provider.error.js';
import type { SearchOptions, SearchProvider, SearchResult } from '../providers/search-provider.interface.js';
import { SEARCH_PROVIDER, SEARCH_PROVIDERS } from '../providers/search-provider.registry.js';
import { RESULTS_PER_CONTEXT_SIZE, type WebSearchParams } from '../web-search-declaration.js';
import { ConcurrencyLimiter, SlotWaitAborted } from './concurrency-limiter.js';
import { dedupeKey, passesDomainFilters } from './domain-filter.js';
import { languageForCountry } from './search-location.js';

export interface WebSearchRequest {
  queries: readonly string[];
  params: WebSearchParams;
  signal: AbortSignal;
  /** Epoch ms: the call's deadline. Provider requests end a little before it. */
  deadline: number;
}

export interface QueryOutcome {
  query: string;
  results: SearchResult[];
  error?: SearchProviderError;
}

export interface WebSearchOutcome {
  /** Every query's results, merged and de-duplicated by URL. */
  results: SearchResult[];
  perQuery: QueryOutcome[];
}

/**
 * Leaves room between the provider's deadline and the scheduler's: a slow
 * provider then ends as this module's own "did not answer" error, which says
 * which provider was slow, rather than as the scheduler's generic timeout.
 */
function providerDeadline(deadline: number, now = Date.now()): number {
  const remaining = deadline - now;
  return deadline - Math.min(250, Math.max(0, Math.floor(remaining * 0.1)));
}

/**
 * Runs the queries of one `web_search` call against the configured provider:
 * concurrently, under the provider-wide limit, each result list filtered to
 * the allowed domains and past the blocked ones, and cut to the declaration's count, then merged.
 */
@Injectable()
export class WebSearchService {
  /** `null` when `webSearch.provider` is not set: calls then fail with an explanation. */
  readonly provider: SearchProvider | null;
  private readonly limiter: ConcurrencyLimiter;

  constructor(
    @Inject(WEB_SEARCH_SETTINGS) readonly settings: WebSearchSettings,
    /** A provider built outside the registry, bound by an embedding host; wins over `webSearch.provider`. */
    @Optional() @Inject(SEARCH_PROVIDER) custom?: SearchProvider,
  ) {
    const cls = settings.provider ? SEARCH_PROVIDERS.get(settings.provider) : undefined;
    this.provider = custom ?? (cls && settings.endpoint ? new cls(settings.endpoint) : null);
    this.limiter = new ConcurrencyLimiter(settings.maxConcurrentQueries);
  }

  async search(req: WebSearchRequest): Promise<WebSearchOutcome> {
    const provider = this.provider;
    if (!provider) throw new Error('web search is not configured');
    const options = this.optionsFor(req.params, providerDeadline(req.deadline));
    // Only waits for a slot need this timer: requests enforce the deadline
    // themselves and report it as a timeout of the provider, not a cancellation.
    const expiry = new AbortController();
    const timer = setTimeout(() => expiry.abort(), Math.max(0, options.deadline - Date.now()));
    const waitSignal = AbortSignal.any([req.signal, expiry.signal]);
    try {
      const perQuery = await Promise.all(req.queries.map((query) => this.runQuery(provider, query, options, waitSignal, req.signal)));
      return { perQuery, results: mergeResults(perQuery.map((o) => o.results)) };
    } finally {
      clearTimeout(timer);
    }
  }

  optionsFor(params: WebSearchParams, deadline: number): SearchOptions {
    const location = params.userLocation ?? {};
    const options: SearchOptions = {
      count: RESULTS_PER_CONTEXT_SIZE[params.contextSize],
      depth: params.contextSize === 'high' ? 'advanced' : 'basic',
      deadline,
    };
    if (location.country) {
      options.country = location.country;
      const language = languageForCountry(location.country);
      if (language) options.language = language;
    }
    if (location.region) options.region = location.region;
    if (location.city) options.city = location.city;
    if (location.timezone) options.timezone = location.timezone;
    if (params.allowedDomains?.length) options.allowedDomains = params.allowedDomains;
    if (params.blockedDomains?.length) options.blockedDomains = params.blockedDomains;
    return options;
  }

  private async runQuery(provider: SearchProvider, query: string, options: SearchOptions, waitSignal: AbortSignal, clientSignal: AbortSignal): Promise<QueryOutcome> {
    try {
      const found = await this.limiter.run(
        // A slot that frees up just as the deadline passes is no use: count it as never having come.
        () => (Date.now() >= options.deadline ? Promise.reject(new SlotWaitAborted()) : provider.search(query, options, clientSignal)),
        waitSignal,
      );
      const results = found.filter((r) => passesDomainFilters(r.url, options)).slice(0, options.count);
      return { query, results };
    } catch (err) {
      return { query, results: [], error: this.asProviderError(err, provider.name, clientSignal) };
    }
  }

  private asProviderError(err: unknown, name: string, clientSignal: AbortSignal): SearchProviderError {
    if (err instanceof SearchProviderError) return err;
    if (clientSignal.aborted) return new SearchProviderError(`the search on ${name} was cancelled`, name, 'aborted');
    if (err instanceof SlotWaitAborted) {
      return new SearchProviderError(`${name} had no free request slot before the deadline (webSearch.maxConcurrentQueries is ${this.limiter.limit})`, name, 'timeout');
    }
    return new SearchProviderError(`${name} search failed: ${(err as Error)?.message ?? String(err)}`, name, 'malformed');
  }
}

/**
 * Round-robin across the queries' lists, so each query's best hits come
 * before any query's tail (the budget cuts from the tail), skipping URLs
 * already taken.
 */
export function mergeResults(lists: readonly SearchResult[][]): SearchResult[] {
  const seen = new Set<string>();
  const merged: SearchResult[] = [];
  const longest = lists.reduce((m, l) => Math.max(m, l.length), 0);
  for (let rank = 0; rank < longest; rank++) {
    for (const list of lists) {
      const result = list[rank];
      if (!result) continue;
      const key = dedupeKey(result.url);
      if (seen.has(key)) continue;
      seen.add(key);
      merged.push(result);
    }
  }
  return merged;
}
