import { Injectable } from '@nestjs/common';
import { InputItemProvider } from '#tool-sdk/decorators.js';
import type { InputItemHandler } from '#tool-sdk/contract/input-items.js';
import type { JsonObject, ModelItem, PublicItem } from '#tool-sdk/items.js';
import { CompactionService } from './compaction.service.js';

/**
 * `compaction` as an input item: a summary the client sends back in place of
 * the turns it replaced. Checked at parse time too, so that a forged or
 * mangled item is a 400 naming its index before anything runs.
 */
@Injectable()
@InputItemProvider({ type: 'compaction' })
export class CompactionInputItem implements InputItemHandler {
  readonly itemType = 'compaction';

  constructor(private readonly compaction: CompactionService) {}

  validate(item: JsonObject, path: string): void {
    this.compaction.toModelItems(item as PublicItem, path);
  }

  toModelItems(item: PublicItem): ModelItem[] {
    return this.compaction.toModelItems(item);
  }
}
