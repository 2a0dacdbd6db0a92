/** One search engine API behind the `web_search` tool. */
export interface SearchProvider {
  /** The config name (`webSearch.provider`), also used in error messages. */
  readonly name: string;
  /**
   * Runs one query. Rejects with `SearchProviderError` for anything the
   * provider did wrong (HTTP error, timeout, unreadable body) and stops its
   * request as soon as `signal` fires.
   */
  search(query: string, options: SearchOptions, signal: AbortSignal): Promise<SearchResult[]>;
}

export interface SearchOptions {
  /** Results wanted; providers without a count parameter return what they have. */
  count: number;
  /** ISO 3166-1 alpha-2, upper case. */
  country?: string;
  /** Primary language for `country` (BCP 47 language subtag, e.g. `de`). */
  language?: string;
  region?: string;
  city?: string;
  /** IANA time zone. */
  timezone?: string;
  /** Lower-case host names results must come from; empty or absent means any. */
  allowedDomains?: readonly string[];
  /** Lower-case host names (and their subdomains) results must not come from. */
  blockedDomains?: readonly string[];
  /** `high` context asks providers for their deeper (slower) search where they have one. */
  depth: 'basic' | 'advanced';
  /** Epoch ms: the request must be over by then, retries included. */
  deadline: number;
}

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  /** Publication date or age as the provider reports it. */
  date?: string;
}
