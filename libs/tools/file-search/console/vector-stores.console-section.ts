import { Injectable } from '@nestjs/common';
import type { JsonObject } from '#tool-sdk/items.js';
import type { CatalogQuery } from '#tool-sdk/ports/catalog.js';
import { type ConsolePage, type ConsoleSection, ConsoleSectionProvider } from '#tool-sdk/ports/console-sections.js';
import { storeFileObject, storeObject } from '../api/public-objects.js';
import { NO_OWNER, type VectorStoreRow } from '../storage/file-search-rows.js';
import { FileSearchStore } from '../storage/file-search.store.js';

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The console's view of the vector stores: every owner's, in their public shape, with their files. */
@Injectable()
@ConsoleSectionProvider()
export class VectorStoresConsoleSection implements ConsoleSection {
  readonly name = 'vector_stores';
  readonly title = 'Vector stores';

  constructor(private readonly store: FileSearchStore) {}

  async list(query: CatalogQuery): Promise<ConsolePage> {
    const page = await this.store.listAllStores({ limit: query.limit, order: 'desc', after: query.after });
    const stats = await this.store.storeStats(page.rows.map((r) => r.id));
    const data = page.rows.map((r) => this.shape(r, stats.get(r.id)!));
    return { data, has_more: page.hasMore, last_id: page.rows.at(-1)?.id ?? null };
  }

  async get(id: string): Promise<JsonObject | null> {
    const row = await this.store.storeById(id);
    if (!row) return null;
    return this.shape(row, (await this.store.storeStats([row.id])).get(row.id)!);
  }

  async files(id: string, query: CatalogQuery): Promise<ConsolePage | null> {
    // The store is looked up first: only its own files are listed, by its id as the store has it.
    const row = await this.store.storeById(id);
    if (!row) return null;
    const page = await this.store.listStoreFiles(row.id, { limit: query.limit, order: 'desc', after: query.after }, {});
    return { data: page.rows.map((f) => storeFileObject(f) as JsonObject), has_more: page.hasMore, last_id: page.rows.at(-1)?.fileId ?? null };
  }

  private shape(row: VectorStoreRow, stats: Parameters<typeof storeObject>[1]): JsonObject {
    return { ...(storeObject(row, stats, nowSeconds()) as JsonObject), owner: row.owner === NO_OWNER ? null : row.owner };
  }
}
