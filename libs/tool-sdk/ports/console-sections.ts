import { SetMetadata } from '@nestjs/common';
import type { JsonObject } from '../items.js';
import type { CatalogQuery } from './catalog.js';

/** Metadata key marking a provider as a console section (found through discovery, like tool handlers). */
export const CONSOLE_SECTION = 'switchyard:console-section';

/** One page of records as the console shows them: each record in its public shape plus `owner`. */
export interface ConsolePage {
  data: JsonObject[];
  has_more: boolean;
  last_id: string | null;
}

/**
 * What a tool library lets the operator's console browse (vector stores,
 * containers): every owner's records, read-only. The console lists them
 * only behind an administrator key; a section never writes, and ids come
 * from the section's own store (an id it does not hold is `null`, a 404).
 */
export interface ConsoleSection {
  /** The URL segment: `/console/api/sections/<name>`. */
  readonly name: string;
  readonly title: string;
  list(query: CatalogQuery): Promise<ConsolePage>;
  get(id: string): Promise<JsonObject | null>;
  /** The record's files (a vector store's, a container's); null when the record is not there. */
  files(id: string, query: CatalogQuery): Promise<ConsolePage | null>;
}

/** Marks a provider implementing `ConsoleSection`; the console module, when enabled, lists it. */
export const ConsoleSectionProvider = (): ClassDecorator => SetMetadata(CONSOLE_SECTION, true);
