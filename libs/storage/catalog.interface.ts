/**
 * The operator's view of a store: every record, whoever owns it, newest
 * first. Only the console reads it (behind an administrator key); tenant
 * routes keep going through the owner-scoped methods, so nothing here widens
 * what one key can see of another's.
 */
export interface CatalogQuery {
  /** 1..100. */
  limit: number;
  /** The id of the last entry of the previous page: the page starts after it. */
  after?: string;
}

/** One record as listed: enough to read it back through the owner-scoped methods. */
export interface CatalogEntry {
  id: string;
  owner: string | null;
  /** Epoch seconds. */
  createdAt: number;
}

export interface CatalogPage {
  data: CatalogEntry[];
  has_more: boolean;
  last_id: string | null;
}

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

export function hasCatalog<T extends object>(store: T | null | undefined): store is T & { catalog: (...args: never[]) => Promise<CatalogPage> } {
  return typeof (store as { catalog?: unknown } | null | undefined)?.catalog === 'function';
}
