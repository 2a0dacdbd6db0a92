import type { PublicItem } from '#tool-sdk/items.js';
import { MAX_LIST_LIMIT, type StateStore } from '#storage/index.js';

/** Every item of a conversation, oldest first; null when it is missing or foreign. */
export async function readConversationItems(store: StateStore, id: string, owner: string | null): Promise<PublicItem[] | null> {
  const items: PublicItem[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.listConversationItems(id, owner, { order: 'asc', limit: MAX_LIST_LIMIT, after });
    if (!page) return null;
    items.push(...page.data.map((entry) => entry.item));
    if (!page.has_more || page.last_id === null) return items;
    after = page.last_id;
  }
}
