import type { PublicItem } from '#tool-sdk/items.js';
import { resolveItemReferences } from './item-references.util.js';

const stored: Record<string, PublicItem> = {
  msg_a: { type: 'message', id: 'msg_a', role: 'assistant', content: 'legacy shorthand' } as PublicItem,
  rs_b: { type: 'reasoning', id: 'rs_b', summary: [], content: [{ type: 'reasoning_text', text: 'why' }] } as PublicItem,
};

describe('resolveItemReferences', () => {
  it('replaces references in place, in order, with one lookup for all of them, canonical', async () => {
    const lookups: string[][] = [];
    const user = { type: 'message', id: 'msg_u', role: 'user', content: [{ type: 'input_text', text: 'next' }] } as PublicItem;
    const resolved = await resolveItemReferences(
      [{ type: 'item_reference', id: 'rs_b' } as PublicItem, { type: 'item_reference', id: 'msg_a' } as PublicItem, user],
      async (ids) => {
        lookups.push([...ids]);
        return new Map(ids.filter((id) => stored[id]).map((id) => [id, stored[id]]));
      },
    );
    expect(lookups).toEqual([['rs_b', 'msg_a']]);
    expect(resolved.map((i) => i.id)).toEqual(['rs_b', 'msg_a', 'msg_u']);
    expect(resolved[1]).toMatchObject({ status: 'completed', content: [{ type: 'output_text', text: 'legacy shorthand', annotations: [] }] });
    expect(resolved[2]).toBe(user);
  });

  it('does not look anything up without references', async () => {
    let called = false;
    await resolveItemReferences([], async () => {
      called = true;
      return new Map();
    });
    expect(called).toBe(false);
  });

  it('names the first unknown reference under the given root', async () => {
    const lookup = async () => new Map<string, PublicItem>();
    await expect(resolveItemReferences([{ type: 'item_reference', id: 'x' } as PublicItem], lookup, 'items')).rejects.toMatchObject({
      name: 'InvalidRequestError',
      param: 'items[0].id',
      code: 'item_not_found',
    });
  });
});
