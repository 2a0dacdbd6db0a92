import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, ModuleRef, Reflector } from '@nestjs/core';
import { NotFoundError } from '#tool-sdk/errors.js';
import type { JsonObject, PublicItem } from '#tool-sdk/items.js';
import type { CatalogQuery } from '#tool-sdk/ports/catalog.js';
import { CONSOLE_SECTION, type ConsolePage, type ConsoleSection } from '#tool-sdk/ports/console-sections.js';
import { BACKGROUND_STORE, type BackgroundStore } from '#storage/background-store.interface.js';
import { type BackgroundCatalog, type CatalogEntry, type CatalogKind, type StateCatalog, hasCatalog } from '#storage/catalog.interface.js';
import { STATE_STORE, type StateStore, type StoredResponse } from '#storage/state-store.interface.js';

/** A provider of the application, wherever it is declared, or undefined when none is. */
export function optional<T>(modules: ModuleRef, token: symbol | (abstract new (...args: never[]) => T)): T | undefined {
  try {
    return (modules.get<T>(token, { strict: false }) as T | null) ?? undefined;
  } catch {
    return undefined;
  }
}

const EMPTY: ConsolePage = { data: [], has_more: false, last_id: null };

/** What the response list shows of one stored response: enough to pick it, the rest is one click away. */
function responseSummary(stored: StoredResponse): JsonObject {
  const r = stored.response;
  const output = Array.isArray(r.output) ? (r.output as JsonObject[]) : [];
  return {
    id: stored.id,
    owner: stored.owner,
    created_at: stored.createdAt,
    status: stored.status,
    model: typeof r.model === 'string' ? r.model : null,
    previous_response_id: stored.previousResponseId,
    conversation_id: stored.conversationId,
    output_types: output.map((item) => String(item.type)),
    output_text: output
      .filter((item) => item.type === 'message')
      .flatMap((item) => (Array.isArray(item.content) ? (item.content as JsonObject[]) : []))
      .map((part) => (typeof part.text === 'string' ? part.text : ''))
      .join('')
      .slice(0, 200),
  };
}

/**
 * Reads for the console: each list comes from the store's catalog (every
 * owner), each record back through the owner-scoped read with the owner the
 * catalog gave, so an id is only ever looked up in the store it was listed
 * from and a record deleted meanwhile is a 404.
 */
@Injectable()
export class ConsoleCatalog implements OnModuleInit {
  private sections = new Map<string, ConsoleSection>();

  private state?: StateStore;
  private background?: BackgroundStore;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    private readonly modules: ModuleRef,
  ) {}

  onModuleInit(): void {
    // The stores belong to the state module (absent under a responseState override): found app-wide, or none.
    this.state = optional<StateStore>(this.modules, STATE_STORE);
    this.background = optional<BackgroundStore>(this.modules, BACKGROUND_STORE);
    for (const wrapper of this.discovery.getProviders()) {
      const type = wrapper.metatype as Function | undefined;
      if (!type || !wrapper.instance || !this.reflector.get<boolean>(CONSOLE_SECTION, type)) continue;
      const section = wrapper.instance as ConsoleSection;
      this.sections.set(section.name, section);
    }
  }

  sectionList(): Array<{ name: string; title: string }> {
    return [...this.sections.values()].map((s) => ({ name: s.name, title: s.title }));
  }

  async responses(query: CatalogQuery): Promise<ConsolePage> {
    const page = await this.stateCatalog('responses', query);
    const stored = await Promise.all(page.data.map((e) => this.state!.getResponse(e.id, e.owner)));
    return { data: stored.filter((s): s is StoredResponse => s !== null).map(responseSummary), has_more: page.has_more, last_id: page.last_id };
  }

  async response(id: string): Promise<JsonObject> {
    const owner = await this.ownerOf('responses', id);
    const stored = owner === undefined ? null : await this.state!.getResponse(id, owner);
    if (!stored) throw new NotFoundError(`No stored response with id '${id}'.`, 'response_not_found', 'id');
    return {
      id: stored.id,
      owner: stored.owner,
      created_at: stored.createdAt,
      previous_response_id: stored.previousResponseId,
      conversation_id: stored.conversationId,
      response: stored.response,
      input_items: stored.inputItems as unknown as JsonObject[],
      tools: stored.tools,
    };
  }

  async conversations(query: CatalogQuery): Promise<ConsolePage> {
    const page = await this.stateCatalog('conversations', query);
    const found = await Promise.all(page.data.map((e) => this.state!.getConversation(e.id, e.owner)));
    const data = found.filter((c) => c !== null).map((c) => ({ id: c.id, owner: c.owner, created_at: c.createdAt, metadata: c.metadata }));
    return { data, has_more: page.has_more, last_id: page.last_id };
  }

  async conversation(id: string, query: CatalogQuery): Promise<JsonObject> {
    const owner = await this.ownerOf('conversations', id);
    const conversation = owner === undefined ? null : await this.state!.getConversation(id, owner);
    const items = conversation ? await this.state!.listConversationItems(id, conversation.owner, { limit: query.limit, after: query.after, order: 'asc' }) : null;
    if (!conversation || !items) throw new NotFoundError(`No conversation with id '${id}'.`, 'conversation_not_found', 'id');
    return {
      id: conversation.id,
      owner: conversation.owner,
      created_at: conversation.createdAt,
      metadata: conversation.metadata,
      items: { data: items.data.map((i) => i.item as PublicItem as unknown as JsonObject), has_more: items.has_more, last_id: items.last_id },
    };
  }

  async backgroundRuns(query: CatalogQuery): Promise<ConsolePage> {
    if (!hasCatalog(this.background)) return EMPTY;
    const page = await (this.background as BackgroundStore & BackgroundCatalog).catalog(query);
    const runs = await Promise.all(page.data.map((e) => this.background!.get(e.id, e.owner)));
    const data = runs
      .filter((r) => r !== null)
      .map((r) => ({
        id: r.id,
        owner: r.owner,
        status: r.status,
        created_at: (r.response.created_at as number | undefined) ?? null,
        node_id: r.nodeId,
        last_sequence: r.lastSequence,
        response: r.response,
      }));
    return { data, has_more: page.has_more, last_id: page.last_id };
  }

  section(name: string): ConsoleSection {
    // Looked up in the map of discovered sections: a name is never a path.
    const section = this.sections.get(name);
    if (!section) throw new NotFoundError(`No console section '${name}' (there are: ${[...this.sections.keys()].join(', ') || 'none'}).`, 'not_found', 'section');
    return section;
  }

  private async stateCatalog(kind: CatalogKind, query: CatalogQuery) {
    if (!hasCatalog(this.state)) return { ...EMPTY, data: [] as CatalogEntry[] };
    return (this.state as StateStore & StateCatalog).catalog(kind, query);
  }

  /** The owner this id is stored with (undefined: not in this store), read through the catalog by id. */
  private async ownerOf(kind: CatalogKind, id: string): Promise<string | null | undefined> {
    if (!hasCatalog(this.state)) return undefined;
    const page = await (this.state as StateStore & StateCatalog).catalog(kind, { limit: 1, id });
    return page.data[0]?.id === id ? page.data[0].owner : undefined;
  }
}
