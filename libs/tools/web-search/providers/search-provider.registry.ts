import type { ProviderEndpoint, ProviderRequirements } from '../config/web-search-settings.js';
import { BraveSearchProvider } from './brave.search-provider.js';
import type { SearchProvider } from './search-provider.interface.js';
import { SearxngSearchProvider } from './searxng.search-provider.js';
import { SerperSearchProvider } from './serper.search-provider.js';
import { TavilySearchProvider } from './tavily.search-provider.js';

/** Injection token for a host-supplied `SearchProvider` that replaces the configured one. */
export const SEARCH_PROVIDER = Symbol('SEARCH_PROVIDER');

/** A provider class: built from its config section, declaring what that section needs. */
export interface SearchProviderClass {
  new (endpoint: ProviderEndpoint): SearchProvider;
  readonly requirements: ProviderRequirements;
}

/** `webSearch.provider` → implementation. A new provider is one class and one line here. */
export const SEARCH_PROVIDERS: ReadonlyMap<string, SearchProviderClass> = new Map<string, SearchProviderClass>([
  ['searxng', SearxngSearchProvider],
  ['brave', BraveSearchProvider],
  ['tavily', TavilySearchProvider],
  ['serper', SerperSearchProvider],
]);

export function providerRequirements(): ReadonlyMap<string, ProviderRequirements> {
  return new Map([...SEARCH_PROVIDERS].map(([name, cls]) => [name, cls.requirements]));
}
