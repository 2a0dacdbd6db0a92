import type { CatalogPage, CatalogQuery } from '#tool-sdk/ports/catalog.js';

export type { CatalogEntry, CatalogPage, CatalogQuery } from '#tool-sdk/ports/catalog.js';

/** Which of a state store's record kinds a catalog lists. */
export type CatalogKind = 'responses' | 'conversations';

/** Listing across owners, offered by the state stores that can (all three built-in ones do). */
export interface StateCatalog {
  catalog(kind: CatalogKind, query: CatalogQuery): Promise<CatalogPage>;
}

/** Listing of background runs across owners. */
export interface BackgroundCatalog {
  catalog(query: CatalogQuery): Promise<CatalogPage>;
}

/** Whether a store offers a catalog (an override of the state store may not). */
export function hasCatalog(store: unknown): boolean {
  return typeof (store as { catalog?: unknown } | null | undefined)?.catalog === 'function';
}
