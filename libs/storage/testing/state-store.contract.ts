/// <reference types="jest" />
import { NotFoundError } from '#tool-sdk/errors.js';
import { newId } from '#tool-sdk/ids.js';
import type { PublicItem } from '#tool-sdk/items.js';
import { DuplicateIdError } from '../shared/duplicate-id.error.js';
import type { StateCatalog } from '../catalog.interface.js';
import type { Conversation, StateStore, StoredResponse } from '../state-store.interface.js';

/**
 * The behaviour every StateStore backend must share, run once per backend.
 * `factory` returns a fresh store that has not been initialised and shares no
 * records with earlier ones; the suite calls `init()` and `close()` itself.
 */
export function describeStateStoreContract(name: string, factory: () => StateStore | Promise<StateStore>): void {
  describe(`${name} StateStore contract`, () => {
    let store: StateStore;

    beforeEach(async () => {
      store = await factory();
      await store.init();
    });

    afterEach(async () => {
      await store.close();
    });

    const A = 'owner-a';
    const B = 'owner-b';

    const message = (text: string, id?: string): PublicItem => ({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text }],
      ...(id === undefined ? {} : { id }),
    });

    const response = (overrides: Partial<StoredResponse> = {}): StoredResponse => {
      const id = overrides.id ?? newId('resp');
      return {
        id,
        owner: A,
        createdAt: 1_760_000_000,
        previousResponseId: null,
        conversationId: null,
        status: 'completed',
        response: {
          id,
          object: 'response',
          status: 'completed',
          output: [{ id: newId('msg'), type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Grüße 👋 "quoted"\n', annotations: [] }] }],
          usage: { input_tokens: 3, output_tokens: 5, total_tokens: 8 },
          temperature: 0.7,
          metadata: {},
          error: null,
        },
        inputItems: [message('hello', newId('msg'))],
        modelItems: [
          { type: 'message', role: 'user', content: 'hello' },
          { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":1}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
        ],
        tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }],
        toolChoice: { type: 'function', name: 'lookup' },
        extra: { mcpListed: ['docs'] },
        ...overrides,
      };
    };

    const conversation = (overrides: Partial<Conversation> = {}): Conversation => ({
      id: newId('conv'),
      owner: A,
      createdAt: 1_760_000_000,
      metadata: { topic: 'demo' },
      ...overrides,
    });

    const texts = (items: PublicItem[]): string[] => items.map((item) => ((item as { content: Array<{ text: string }> }).content[0] ?? { text: '' }).text);

    describe('responses', () => {
      it('round-trips every field', async () => {
        const r = response();
        await store.saveResponse(r);
        expect(await store.getResponse(r.id, A)).toEqual(r);
      });

      it('keeps a string tool_choice, a missing extra and a previous response id', async () => {
        const first = response();
        const r = response({ toolChoice: 'auto', extra: undefined, previousResponseId: first.id });
        delete r.extra;
        await store.saveResponse(first);
        await store.saveResponse(r);
        const got = await store.getResponse(r.id, A);
        expect(got).toEqual(r);
        expect(got).not.toHaveProperty('extra');
      });

      it('gives input items without an id one, keeps given ids and their order', async () => {
        const r = response({
          inputItems: [message('one'), message('two', 'msg_given'), { type: 'function_call_output', call_id: 'call_9', output: 'done' }],
        });
        await store.saveResponse(r);
        const got = await store.getResponse(r.id, A);
        const ids = got!.inputItems.map((item) => item.id);
        expect(ids[0]).toMatch(/^msg_[0-9a-f]+$/);
        expect(ids[1]).toBe('msg_given');
        expect(ids[2]).toMatch(/^item_[0-9a-f]+$/);
        expect(got!.inputItems[2]).toMatchObject({ type: 'function_call_output', call_id: 'call_9', output: 'done' });
        expect(texts(got!.inputItems.slice(0, 2))).toEqual(['one', 'two']);
        // The caller's objects are left as they were.
        expect(r.inputItems[0]).not.toHaveProperty('id');
      });

      it('returns copies that do not alias stored state', async () => {
        const r = response();
        await store.saveResponse(r);
        (r.response as { status: string }).status = 'mutated';
        const got = await store.getResponse(r.id, A);
        expect(got!.response.status).toBe('completed');
        got!.inputItems.push(message('extra'));
        expect((await store.getResponse(r.id, A))!.inputItems).toHaveLength(1);
      });

      it('answers null for an unknown id', async () => {
        expect(await store.getResponse('resp_missing', A)).toBeNull();
        expect(await store.listInputItems('resp_missing', A, {})).toBeNull();
        expect(await store.getChain('resp_missing', A)).toBeNull();
        expect(await store.deleteResponse('resp_missing', A)).toBe(false);
      });

      it('hides a response from other owners and from null-owner callers', async () => {
        const r = response();
        await store.saveResponse(r);
        for (const other of [B, null]) {
          expect(await store.getResponse(r.id, other)).toBeNull();
          expect(await store.listInputItems(r.id, other, {})).toBeNull();
          expect(await store.getChain(r.id, other)).toBeNull();
          expect(await store.deleteResponse(r.id, other)).toBe(false);
        }
        expect(await store.getResponse(r.id, A)).not.toBeNull();
      });

      it('matches a null owner exactly: visible to null callers, not to a keyed caller', async () => {
        const r = response({ owner: null });
        await store.saveResponse(r);
        expect(await store.getResponse(r.id, null)).toEqual(r);
        expect(await store.getResponse(r.id, A)).toBeNull();
      });

      it('deletes a response with its input items', async () => {
        const r = response({ inputItems: [message('a', 'msg_a'), message('b', 'msg_b')] });
        await store.saveResponse(r);
        expect(await store.deleteResponse(r.id, A)).toBe(true);
        expect(await store.getResponse(r.id, A)).toBeNull();
        expect(await store.deleteResponse(r.id, A)).toBe(false);
        // Saving again under the same id shows no leftovers of the old items.
        await store.saveResponse({ ...r, inputItems: [message('c', 'msg_c')] });
        expect((await store.listInputItems(r.id, A, {}))!.data.map((item) => item.id)).toEqual(['msg_c']);
      });

      it('refuses a duplicate response id and keeps the first', async () => {
        const r = response();
        await store.saveResponse(r);
        const clash = store.saveResponse({ ...r, status: 'failed', inputItems: [message('x')] });
        await expect(clash).rejects.toBeInstanceOf(DuplicateIdError);
        await expect(clash).rejects.toMatchObject({ name: 'DuplicateIdError', code: 'duplicate_response_id' });
        expect(await store.getResponse(r.id, A)).toEqual(r);
      });

      it('stores nothing when an input item fails to serialize mid-write', async () => {
        const r = response({
          inputItems: [message('fine'), { type: 'message', role: 'user', content: 'bad', weight: BigInt(1) }],
        });
        await expect(store.saveResponse(r)).rejects.toThrow();
        expect(await store.getResponse(r.id, A)).toBeNull();
        // The id is still free.
        await store.saveResponse(response({ id: r.id }));
        expect((await store.getResponse(r.id, A))!.inputItems).toHaveLength(1);
      });
    });

    describe('input item pages', () => {
      const ids = ['msg_1', 'msg_2', 'msg_3', 'msg_4', 'msg_5'];
      let id: string;

      beforeEach(async () => {
        const r = response({ inputItems: ids.map((itemId) => message(itemId, itemId)) });
        id = r.id;
        await store.saveResponse(r);
      });

      const pageIds = async (opts: Parameters<StateStore['listInputItems']>[2]) => {
        const page = (await store.listInputItems(id, A, opts))!;
        return { ids: page.data.map((item) => item.id), first: page.first_id, last: page.last_id, more: page.has_more };
      };

      it('lists newest first by default, 20 at most', async () => {
        expect(await pageIds({})).toEqual({ ids: [...ids].reverse(), first: 'msg_5', last: 'msg_1', more: false });
      });

      it('pages forward with limit and after, in either order', async () => {
        expect(await pageIds({ order: 'asc', limit: 2 })).toEqual({ ids: ['msg_1', 'msg_2'], first: 'msg_1', last: 'msg_2', more: true });
        expect(await pageIds({ order: 'asc', limit: 2, after: 'msg_2' })).toEqual({ ids: ['msg_3', 'msg_4'], first: 'msg_3', last: 'msg_4', more: true });
        expect(await pageIds({ order: 'asc', limit: 2, after: 'msg_4' })).toEqual({ ids: ['msg_5'], first: 'msg_5', last: 'msg_5', more: false });
        expect(await pageIds({ order: 'desc', limit: 2, after: 'msg_4' })).toEqual({ ids: ['msg_3', 'msg_2'], first: 'msg_3', last: 'msg_2', more: true });
      });

      it('bounds the window with before', async () => {
        expect((await pageIds({ order: 'asc', before: 'msg_3' })).ids).toEqual(['msg_1', 'msg_2']);
        expect((await pageIds({ order: 'desc', before: 'msg_3' })).ids).toEqual(['msg_5', 'msg_4']);
        expect((await pageIds({ order: 'asc', after: 'msg_1', before: 'msg_4' })).ids).toEqual(['msg_2', 'msg_3']);
        expect(await pageIds({ order: 'asc', after: 'msg_4', before: 'msg_2' })).toEqual({ ids: [], first: null, last: null, more: false });
      });

      it('refuses a bad limit, order or cursor, naming the parameter', async () => {
        for (const limit of [0, 101, 1.5]) {
          await expect(store.listInputItems(id, A, { limit })).rejects.toMatchObject({ name: 'InvalidRequestError', param: 'limit' });
        }
        await expect(store.listInputItems(id, A, { order: 'up' as 'asc' })).rejects.toMatchObject({ param: 'order' });
        await expect(store.listInputItems(id, A, { after: 'msg_nope' })).rejects.toMatchObject({ param: 'after' });
        await expect(store.listInputItems(id, A, { before: 'msg_nope' })).rejects.toMatchObject({ param: 'before' });
      });

      it('accepts the bounds of limit', async () => {
        expect((await pageIds({ limit: 1 })).ids).toEqual(['msg_5']);
        expect((await pageIds({ limit: 100 })).ids).toHaveLength(5);
      });

      it('lists an empty input', async () => {
        const r = response({ inputItems: [] });
        await store.saveResponse(r);
        expect(await store.listInputItems(r.id, A, {})).toEqual({ data: [], first_id: null, last_id: null, has_more: false });
      });
    });

    describe('chains', () => {
      it('follows previous_response_id oldest first, bounded by maxDepth', async () => {
        const a = response();
        const b = response({ previousResponseId: a.id });
        const c = response({ previousResponseId: b.id });
        for (const r of [a, b, c]) await store.saveResponse(r);
        expect(await store.getChain(c.id, A)).toEqual([a, b, c]);
        expect((await store.getChain(c.id, A, 2))!.map((r) => r.id)).toEqual([b.id, c.id]);
        expect((await store.getChain(c.id, A, 1))!.map((r) => r.id)).toEqual([c.id]);
        expect((await store.getChain(a.id, A))!.map((r) => r.id)).toEqual([a.id]);
      });

      it('stops at a deleted ancestor or one owned by another key', async () => {
        const a = response();
        const b = response({ previousResponseId: a.id });
        const c = response({ previousResponseId: b.id });
        for (const r of [a, b, c]) await store.saveResponse(r);
        await store.deleteResponse(b.id, A);
        expect((await store.getChain(c.id, A))!.map((r) => r.id)).toEqual([c.id]);

        const foreign = response({ owner: B });
        const mine = response({ previousResponseId: foreign.id });
        await store.saveResponse(foreign);
        await store.saveResponse(mine);
        expect((await store.getChain(mine.id, A))!.map((r) => r.id)).toEqual([mine.id]);
      });

      it('tells whether every response of a chain is still stored for its owner', async () => {
        if (!store.responsesPresent) throw new Error('this store does not implement responsesPresent');
        const a = response();
        const b = response({ previousResponseId: a.id });
        for (const r of [a, b]) await store.saveResponse(r);
        expect(await store.responsesPresent([a.id, b.id], A)).toBe(true);
        expect(await store.responsesPresent([a.id, b.id], B)).toBe(false);
        expect(await store.responsesPresent([a.id, 'resp_missing'], A)).toBe(false);
        // A chain of one, the common continuation, alone.
        expect(await store.responsesPresent([a.id], A)).toBe(true);
        expect(await store.responsesPresent([a.id], B)).toBe(false);
        expect(await store.responsesPresent(['resp_missing'], A)).toBe(false);
        expect(await store.responsesPresent([a.id], null)).toBe(false);
        await store.deleteResponse(a.id, A);
        expect(await store.responsesPresent([a.id], A)).toBe(false);
        expect(await store.responsesPresent([a.id, b.id], A)).toBe(false);
        expect(await store.responsesPresent([b.id], A)).toBe(true);
      });
    });

    describe('conversations', () => {
      it('creates and reads a conversation with its items in order', async () => {
        const c = conversation();
        expect(await store.createConversation(c, [message('one'), message('two', 'msg_two')])).toEqual(c);
        expect(await store.getConversation(c.id, A)).toEqual(c);
        const page = (await store.listConversationItems(c.id, A, { order: 'asc' }))!;
        expect(page.data.map((entry) => entry.position)).toEqual([0, 1]);
        expect(page.data[0].id).toMatch(/^msg_[0-9a-f]+$/);
        expect(page.data[0].item.id).toBe(page.data[0].id);
        expect(page.data[1]).toMatchObject({ id: 'msg_two', conversationId: c.id, item: message('two', 'msg_two') });
        expect(typeof page.data[1].createdAt).toBe('number');
      });

      it('hides a conversation and its items from other owners', async () => {
        const c = conversation();
        await store.createConversation(c, [message('secret', 'msg_secret')]);
        for (const other of [B, null]) {
          expect(await store.getConversation(c.id, other)).toBeNull();
          expect(await store.updateConversation(c.id, other, { x: '1' })).toBeNull();
          expect(await store.listConversationItems(c.id, other, {})).toBeNull();
          expect(await store.addConversationItems(c.id, other, [message('intrude')])).toBeNull();
          expect(await store.getConversationItem(c.id, 'msg_secret', other)).toBeNull();
          expect(await store.deleteConversationItem(c.id, 'msg_secret', other)).toBe(false);
          expect(await store.deleteConversation(c.id, other)).toBe(false);
        }
        expect((await store.listConversationItems(c.id, A, {}))!.data.map((entry) => entry.id)).toEqual(['msg_secret']);
        expect(await store.getConversation(c.id, A)).toEqual(c);
      });

      it('replaces metadata on update', async () => {
        const c = conversation({ metadata: { a: '1', b: '2' } });
        await store.createConversation(c, []);
        expect(await store.updateConversation(c.id, A, { c: '3' })).toEqual({ ...c, metadata: { c: '3' } });
        expect((await store.getConversation(c.id, A))!.metadata).toEqual({ c: '3' });
        expect(await store.updateConversation('conv_missing', A, {})).toBeNull();
      });

      it('deletes a conversation with its items', async () => {
        const c = conversation();
        await store.createConversation(c, [message('old', 'msg_old')]);
        expect(await store.deleteConversation(c.id, A)).toBe(true);
        expect(await store.getConversation(c.id, A)).toBeNull();
        expect(await store.listConversationItems(c.id, A, {})).toBeNull();
        expect(await store.deleteConversation(c.id, A)).toBe(false);
        // Recreated under the same id, it starts empty.
        await store.createConversation(c, []);
        expect(await store.getConversationItem(c.id, 'msg_old', A)).toBeNull();
        expect((await store.listConversationItems(c.id, A, {}))!.data).toEqual([]);
      });

      it('refuses a duplicate conversation id', async () => {
        const c = conversation();
        await store.createConversation(c, [message('first', 'msg_first')]);
        await expect(store.createConversation({ ...c, metadata: {} }, [message('second')])).rejects.toMatchObject({
          name: 'DuplicateIdError',
          code: 'duplicate_conversation_id',
        });
        expect(await store.getConversation(c.id, A)).toEqual(c);
        expect((await store.listConversationItems(c.id, A, {}))!.data.map((entry) => entry.id)).toEqual(['msg_first']);
      });

      it('creates nothing when its items clash with each other', async () => {
        const c = conversation();
        await expect(store.createConversation(c, [message('a', 'msg_same'), message('b', 'msg_same')])).rejects.toBeInstanceOf(DuplicateIdError);
        expect(await store.getConversation(c.id, A)).toBeNull();
      });

      it('appends items after the existing ones and never reuses a position', async () => {
        const c = conversation();
        await store.createConversation(c, [message('one', 'msg_1'), message('two', 'msg_2')]);
        expect(await store.deleteConversationItem(c.id, 'msg_2', A)).toBe(true);
        const added = (await store.addConversationItems(c.id, A, [message('three'), message('four', 'msg_4')]))!;
        expect(added.map((entry) => entry.position)).toEqual([2, 3]);
        expect(added[0].id).toMatch(/^msg_/);
        expect(added[0].item).toEqual({ ...message('three'), id: added[0].id });
        expect(added[1]).toMatchObject({ id: 'msg_4', conversationId: c.id });
        const page = (await store.listConversationItems(c.id, A, { order: 'asc' }))!;
        expect(page.data.map((entry) => entry.id)).toEqual(['msg_1', added[0].id, 'msg_4']);
        expect(await store.addConversationItems(c.id, A, [])).toEqual([]);
        expect(await store.addConversationItems('conv_missing', A, [message('x')])).toBeNull();
      });

      it('keeps item ids unique within a conversation, all-or-nothing', async () => {
        const c = conversation();
        const other = conversation();
        await store.createConversation(c, [message('one', 'msg_1')]);
        await store.createConversation(other, []);
        const clash = store.addConversationItems(c.id, A, [message('new', 'msg_new'), message('again', 'msg_1')]);
        await expect(clash).rejects.toBeInstanceOf(DuplicateIdError);
        await expect(clash).rejects.toMatchObject({ name: 'DuplicateIdError', code: 'duplicate_conversation_item_id' });
        expect((await store.listConversationItems(c.id, A, {}))!.data.map((entry) => entry.id)).toEqual(['msg_1']);
        // The same id is fine in another conversation.
        expect(await store.addConversationItems(other.id, A, [message('one', 'msg_1')])).toHaveLength(1);
      });

      it('gets and deletes single items', async () => {
        const c = conversation();
        const other = conversation();
        await store.createConversation(c, [message('one', 'msg_1')]);
        await store.createConversation(other, []);
        expect(await store.getConversationItem(c.id, 'msg_1', A)).toMatchObject({ id: 'msg_1', position: 0, item: message('one', 'msg_1') });
        expect(await store.getConversationItem(other.id, 'msg_1', A)).toBeNull();
        expect(await store.getConversationItem(c.id, 'msg_missing', A)).toBeNull();
        expect(await store.deleteConversationItem(other.id, 'msg_1', A)).toBe(false);
        expect(await store.deleteConversationItem(c.id, 'msg_1', A)).toBe(true);
        expect(await store.deleteConversationItem(c.id, 'msg_1', A)).toBe(false);
        expect(await store.getConversationItem(c.id, 'msg_1', A)).toBeNull();
      });

      it('pages items like input items', async () => {
        const c = conversation();
        await store.createConversation(
          c,
          ['a', 'b', 'c', 'd'].map((x) => message(x, `msg_${x}`)),
        );
        const page = (await store.listConversationItems(c.id, A, { limit: 2 }))!;
        expect(page).toMatchObject({ first_id: 'msg_d', last_id: 'msg_c', has_more: true });
        const next = (await store.listConversationItems(c.id, A, { limit: 2, after: page.last_id! }))!;
        expect(next).toMatchObject({ first_id: 'msg_b', last_id: 'msg_a', has_more: false });
        expect(next.data.map((entry) => entry.position)).toEqual([1, 0]);
        await expect(store.listConversationItems(c.id, A, { after: 'msg_zzz' })).rejects.toMatchObject({ param: 'after' });
      });

      it('gives concurrent appends distinct positions', async () => {
        const c = conversation();
        await store.createConversation(c, []);
        await Promise.all(Array.from({ length: 8 }, (_, i) => store.addConversationItems(c.id, A, [message(`${i}a`), message(`${i}b`)])));
        const page = (await store.listConversationItems(c.id, A, { order: 'asc', limit: 100 }))!;
        expect(page.data.map((entry) => entry.position)).toEqual(Array.from({ length: 16 }, (_, i) => i));
        // Each batch stays contiguous.
        for (let i = 0; i < 16; i += 2) {
          const [first, second] = texts(page.data.slice(i, i + 2).map((entry) => entry.item));
          expect(second).toBe(first.replace('a', 'b'));
        }
      });
    });

    describe('responses in conversations', () => {
      it('appends the given items to the conversation with the response', async () => {
        const c = conversation();
        await store.createConversation(c, [message('earlier', 'msg_earlier')]);
        const r = response({ conversationId: c.id });
        await store.saveResponse(r, [message('question'), { id: 'msg_answer', type: 'message', role: 'assistant', content: [] }]);
        expect(await store.getResponse(r.id, A)).toEqual(r);
        const page = (await store.listConversationItems(c.id, A, { order: 'asc' }))!;
        expect(page.data.map((entry) => entry.position)).toEqual([0, 1, 2]);
        expect(page.data[2].id).toBe('msg_answer');
        expect(texts([page.data[1].item])).toEqual(['question']);
      });

      it('stores nothing when an item clashes with one already in the conversation', async () => {
        const c = conversation();
        await store.createConversation(c, [message('earlier', 'msg_earlier')]);
        const r = response({ conversationId: c.id });
        const save = store.saveResponse(r, [message('new', 'msg_new'), message('dup', 'msg_earlier')]);
        await expect(save).rejects.toBeInstanceOf(DuplicateIdError);
        expect(await store.getResponse(r.id, A)).toBeNull();
        expect(await store.listInputItems(r.id, A, {})).toBeNull();
        expect((await store.listConversationItems(c.id, A, {}))!.data.map((entry) => entry.id)).toEqual(['msg_earlier']);
        // Nothing was reserved either: the next item takes the next position.
        expect((await store.addConversationItems(c.id, A, [message('next')]))![0].position).toBe(1);
      });

      it('stores nothing when the conversation is missing or foreign', async () => {
        const foreign = conversation({ owner: B });
        await store.createConversation(foreign, []);
        for (const conversationId of ['conv_missing', foreign.id]) {
          const r = response({ conversationId });
          const save = store.saveResponse(r, [message('x')]);
          await expect(save).rejects.toBeInstanceOf(NotFoundError);
          await expect(save).rejects.toMatchObject({ name: 'NotFoundError', code: 'conversation_not_found' });
          expect(await store.getResponse(r.id, A)).toBeNull();
        }
        expect((await store.listConversationItems(foreign.id, B, {}))!.data).toEqual([]);
      });

      it('leaves conversation items in place when the response is deleted', async () => {
        const c = conversation();
        await store.createConversation(c, []);
        const r = response({ conversationId: c.id });
        await store.saveResponse(r, [message('kept', 'msg_kept')]);
        await store.deleteResponse(r.id, A);
        expect(await store.getConversationItem(c.id, 'msg_kept', A)).not.toBeNull();
      });
    });

    describe('items by id (item_reference)', () => {
      it("finds a response's output and input items and a conversation's items, only the owner's, in one lookup", async () => {
        const r = response();
        await store.saveResponse(r);
        const outputId = (r.response.output as PublicItem[])[0].id as string;
        const inputId = r.inputItems[0].id as string;
        const c = await store.createConversation(conversation(), [message('in conversation', 'msg_conv_item')]);

        const found = await store.findItems([outputId, inputId, 'msg_conv_item', 'msg_missing'], A);
        expect([...found.keys()].sort()).toEqual([inputId, 'msg_conv_item', outputId].sort());
        expect(found.get(outputId)).toEqual((r.response.output as PublicItem[])[0]);
        expect(found.get(inputId)).toEqual(r.inputItems[0]);
        expect(texts([found.get('msg_conv_item')!])).toEqual(['in conversation']);

        expect((await store.findItems([outputId, inputId, 'msg_conv_item'], B)).size).toBe(0);
        expect((await store.findItems([], A)).size).toBe(0);
        expect(c.id).toMatch(/^conv_/);
      });

      it("forgets a deleted response's items", async () => {
        const r = response();
        await store.saveResponse(r);
        const outputId = (r.response.output as PublicItem[])[0].id as string;
        await store.deleteResponse(r.id, A);
        expect((await store.findItems([outputId], A)).size).toBe(0);
      });

      it('looks up a thousand ids at once', async () => {
        const ids = Array.from({ length: 1000 }, (_, i) => `msg_many_${i}`);
        await store.saveResponse(response({ inputItems: ids.slice(0, 500).map((id) => message(id, id)) }));
        const found = await store.findItems(ids, A);
        expect(found.size).toBe(500);
        expect(texts([found.get('msg_many_499')!])).toEqual(['msg_many_499']);
      });
    });

    describe('catalog (the console, across owners)', () => {
      const catalogOf = (s: StateStore) => s as StateStore & StateCatalog;

      it("lists every owner's responses and conversations newest first, page by page, and refuses an unknown cursor", async () => {
        const ids = [1, 2, 3].map((n) => `resp_catalog_${n}`);
        await store.saveResponse(response({ id: ids[0], owner: A, createdAt: 1_760_000_001 }));
        await store.saveResponse(response({ id: ids[1], owner: B, createdAt: 1_760_000_003 }));
        await store.saveResponse(response({ id: ids[2], owner: null, createdAt: 1_760_000_002 }));
        const first = await catalogOf(store).catalog('responses', { limit: 2 });
        expect(first.data).toEqual([
          { id: ids[1], owner: B, createdAt: 1_760_000_003 },
          { id: ids[2], owner: null, createdAt: 1_760_000_002 },
        ]);
        expect(first.has_more).toBe(true);
        const second = await catalogOf(store).catalog('responses', { limit: 2, after: first.last_id! });
        expect(second).toEqual({ data: [{ id: ids[0], owner: A, createdAt: 1_760_000_001 }], has_more: false, last_id: ids[0] });
        expect((await catalogOf(store).catalog('responses', { limit: 1, id: ids[1] })).data).toEqual([{ id: ids[1], owner: B, createdAt: 1_760_000_003 }]);
        expect((await catalogOf(store).catalog('responses', { limit: 1, id: 'resp_nowhere' })).data).toEqual([]);
        await store.createConversation({ id: 'conv_catalog_1', owner: B, createdAt: 1_760_000_000, metadata: {} }, []);
        expect((await catalogOf(store).catalog('conversations', { limit: 10 })).data.map((e) => e.id)).toEqual(['conv_catalog_1']);
        await expect(catalogOf(store).catalog('responses', { limit: 2, after: 'resp_nowhere' })).rejects.toMatchObject({ param: 'after' });
        await expect(catalogOf(store).catalog('responses', { limit: 0 })).rejects.toMatchObject({ param: 'limit' });
      });

      it.each([20, 200, 2_000])('walks %i responses page by page, every one once, newest first, ties in a second included', async (n) => {
        const prefix = `resp_walk${n}_`;
        const base = 1_770_000_000 + n * 10;
        for (let i = 0; i < n; i++) {
          // Seven responses share each second, so the id decides within it.
          await store.saveResponse(response({ id: `${prefix}${String(i).padStart(5, '0')}`, owner: i % 3 === 0 ? B : A, createdAt: base + Math.floor(i / 7) }));
        }
        const seen: Array<{ id: string; createdAt: number }> = [];
        let after: string | undefined;
        let pages = 0;
        for (;;) {
          const page = await catalogOf(store).catalog('responses', after ? { limit: 100, after } : { limit: 100 });
          expect(page.data.length).toBeLessThanOrEqual(100);
          seen.push(...page.data.filter((e) => e.id.startsWith(prefix)));
          pages++;
          if (!page.has_more) break;
          after = page.last_id!;
        }
        expect(seen.map((e) => e.id)).toEqual(Array.from({ length: n }, (_, i) => `${prefix}${String(n - 1 - i).padStart(5, '0')}`));
        expect(seen.every((e, i) => i === 0 || e.createdAt <= seen[i - 1].createdAt)).toBe(true);
        expect(pages).toBeGreaterThanOrEqual(Math.ceil(n / 100));
      });
    });

    it('closes idempotently', async () => {
      await store.close();
      await store.close();
      // afterEach closes once more; re-initialising is allowed too.
      await store.init();
    });
  });
}
