import { Injectable } from '@nestjs/common';
import { type CatalogQuery, type ConsolePage, type ConsoleSection, ConsoleSectionProvider, type JsonObject } from '#tool-sdk/index.js';
import { ContainerStore, type Container } from '../containers/container-store.service.js';
import { containerObject, fileObject } from '../containers/containers.controller.js';

/** The console's view of the code interpreter's containers: every owner's live ones, with their files. */
@Injectable()
@ConsoleSectionProvider()
export class ContainersConsoleSection implements ConsoleSection {
  readonly name = 'containers';
  readonly title = 'Containers';

  constructor(private readonly store: ContainerStore) {}

  async list(query: CatalogQuery): Promise<ConsolePage> {
    const page = await this.store.catalog(query);
    return { data: page.data.map((c) => this.shape(c)), has_more: page.has_more, last_id: page.last_id };
  }

  async get(id: string): Promise<JsonObject | null> {
    const c = await this.store.get(id);
    return c ? this.shape(c) : null;
  }

  async files(id: string, query: CatalogQuery): Promise<ConsolePage | null> {
    const c = await this.store.get(id);
    if (!c) return null;
    // Newest first, like every console list; the file table is the record's own (no path is read here).
    const all = [...c.files.values()].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
    const start = query.after === undefined ? 0 : all.findIndex((f) => f.id === query.after) + 1;
    const slice = all.slice(start, start + query.limit);
    return { data: slice.map((f) => fileObject(c, f)), has_more: start + query.limit < all.length, last_id: slice.at(-1)?.id ?? null };
  }

  private shape(c: Container): JsonObject {
    return { ...containerObject(c), owner: c.owner, files: c.files.size };
  }
}
