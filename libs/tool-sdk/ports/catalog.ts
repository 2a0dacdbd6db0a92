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
  /** Just the record with this id, whoever owns it (an empty page when there is none): how a listed id is read back. */
  id?: string;
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
