import { DEFAULT_BACKGROUND_SETTINGS } from '../config/state-settings.js';
import { of } from 'rxjs';
import type { ResponseRequest } from '#core/loop/response-request.js';
import type { CompletedRun } from '#core/loop/response-state.interface.js';
import type { ModelItem, PublicItem } from '#tool-sdk/items.js';
import type { ModelEvent } from '#core/protocol/model-events.js';
import { MemoryStateStore } from '#storage/index.js';
import type { UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import { CompactionService } from '../compaction/compaction.service.js';
import { SocketResponseCache } from '../websocket/socket-response-cache.js';
import { SocketScopedResponseState } from '../websocket/socket-scoped.response-state.js';
import { responseRequest } from '#core/testing/fixtures.js';
import { StoredResponseState } from './stored-response.state.js';
import { answerOf } from '#edge/testing/answered.js';

/** Answers every summary request with the same text. */
const upstream: UpstreamClient = {
  dialect: 'responses',
  infer: () => of<ModelEvent[]>({ type: 'message.start', key: 'k' }, { type: 'message.done', key: 'k', text: 'SUMMARY' }, { type: 'finish', status: 'completed' }),
  listModels: async () => [],
  probe: async () => undefined,
};

/** The shared request fixture, stored by default as the HTTP layer's default is. */
function request(overrides: Partial<ResponseRequest> = {}): ResponseRequest {
  return responseRequest({ model: 'm', input: [], store: true, ...overrides });
}

let counter = 0;
const msg = (role: 'user' | 'assistant', text: string): PublicItem & ModelItem => ({ type: 'message', id: `msg_${++counter}`, role, content: text });

function run(req: ResponseRequest, output: PublicItem[], extra: Partial<CompletedRun> = {}): CompletedRun {
  const id = `resp_${++counter}`;
  return {
    request: req,
    response: { id, object: 'response', created_at: 1, status: 'completed', output, tools: req.tools },
    modelItems: [...(req.input as ModelItem[]), ...(output as ModelItem[])],
    tools: req.tools,
    ...extra,
  };
}

describe('StoredResponseState', () => {
  let store: MemoryStateStore;
  let state: StoredResponseState;
  let compaction: CompactionService;

  beforeEach(() => {
    store = new MemoryStateStore();
    compaction = new CompactionService(upstream, { compactionKey: null, socketCacheSize: 4, compactionKeepItems: 2, background: DEFAULT_BACKGROUND_SETTINGS });
    state = new StoredResponseState(store, compaction);
  });

  it('rehydrates a chain oldest first, with the head’s tools, and restarts from a compacted base', async () => {
    const tool = { type: 'mcp', server_label: 's', headers: { Authorization: 'x' } };
    const first = run(request({ input: [msg('user', 'a')], tools: [tool], toolChoice: 'required' }), [msg('assistant', 'b')]);
    await state.save(first);
    const stored = await store.getResponse(first.response.id as string, null);
    expect(stored!.tools).toEqual([{ type: 'mcp', server_label: 's' }]);
    expect((stored!.response.tools as unknown[])[0]).toEqual({ type: 'mcp', server_label: 's' });

    const second = run(request({ input: [msg('user', 'c')], previousResponseId: first.response.id as string }), [msg('assistant', 'd')]);
    await state.save(second);
    const prior = await state.load(request({ previousResponseId: second.response.id as string }));
    expect(prior!.modelItems.map((i) => (i as any).content)).toEqual(['a', 'b', 'c', 'd']);
    expect(prior!.publicItems.map((i) => (i as any).content)).toEqual(['a', 'b', 'c', 'd']);
    expect(prior!.toolChoice).toBe('auto');

    const base = [{ type: 'message', role: 'developer', content: 'summary of a..d' }] as ModelItem[];
    const third = run(request({ input: [msg('user', 'e')], previousResponseId: second.response.id as string }), [msg('assistant', 'f')], {
      prior: { modelItems: base, publicItems: [], compacted: true },
    });
    await state.save(third);
    const after = await state.load(request({ previousResponseId: third.response.id as string }));
    expect(after!.modelItems.map((i) => (i as any).content)).toEqual(['summary of a..d', 'e', 'f']);
    expect(after!.publicItems).toHaveLength(6);
  });

  it('continues a chain turn by turn on two workers alternately: the same history a fresh read gives, reading only the newest turns once warm', async () => {
    const other = new StoredResponseState(store, compaction);
    const depths: Array<number | undefined> = [];
    const getChain = store.getChain.bind(store);
    store.getChain = (id, owner, maxDepth) => {
      depths.push(maxDepth);
      return getChain(id, owner, maxDepth);
    };
    let previous: string | undefined;
    for (let turn = 0; turn < 10; turn++) {
      const worker = turn % 2 === 0 ? state : other;
      const req = request({ input: [msg('user', `q${turn}`)], previousResponseId: previous });
      const prior = previous ? await worker.load(req) : null;
      const fresh = previous ? await new StoredResponseState(store, compaction).load(req) : null;
      expect(prior).toEqual(fresh);
      if (prior) expect(prior.modelItems).toHaveLength(2 * turn);
      const done = run(req, [msg('assistant', `a${turn}`)]);
      await (worker as StoredResponseState).save(done);
      previous = done.response.id as string;
    }
    // Each worker extends the chain it kept two turns before, reading the newest turns only: the whole
    // walks are the fresh readers', once a chain is longer than the turns read first (turns 5 to 9).
    expect(depths.filter((d) => d === undefined)).toHaveLength(5);
  });

  it('throws previous_response_not_found and conversation_not_found', async () => {
    await expect(answerOf(state.load(request({ previousResponseId: 'resp_x' })))).resolves.toMatchObject({ status: 404, code: 'previous_response_not_found' });
    await expect(answerOf(state.load(request({ conversationId: 'conv_x' })))).resolves.toMatchObject({ status: 404, code: 'conversation_not_found' });
  });

  it('appends a conversation turn once, skipping items the conversation already holds, store:false included', async () => {
    await store.createConversation({ id: 'conv_1', owner: null, createdAt: 1, metadata: {} }, [msg('user', 'hi')]);
    const prior = await state.load(request({ conversationId: 'conv_1' }));
    expect(prior!.untranslated!.map((i) => (i as any).content)).toEqual(['hi']);
    const resent = prior!.publicItems[0];
    await state.save(run(request({ conversationId: 'conv_1', store: false, input: [resent, msg('user', 'again')] }), [msg('assistant', 'ok')], { prior: prior! }));
    const page = await store.listConversationItems('conv_1', null, { order: 'asc' });
    expect(page!.data.map((e) => (e.item as any).content)).toEqual(['hi', 'again', 'ok']);
  });

  it('compacts a long prior over the threshold, keeping model and untranslated tails apart', async () => {
    const prior = { modelItems: [msg('user', 'x'.repeat(400)), msg('assistant', 'y')], publicItems: [], untranslated: [msg('user', 'z')] };
    const compacted = await compaction.autoCompact(prior, request({ compactThreshold: 10 }));
    expect(compacted.compacted).toBe(true);
    expect(compacted.modelItems.map((i) => (i as any).content)).toEqual([expect.stringContaining('SUMMARY'), 'y']);
    expect(compacted.untranslated!.map((i) => (i as any).content)).toEqual(['z']);
    expect(await compaction.autoCompact(prior, request({ compactThreshold: null }))).toBe(prior);
  });
});

describe('SocketScopedResponseState', () => {
  it('serves its own responses first, falls back to the shared store, and forgets on discard', async () => {
    const store = new MemoryStateStore();
    const compaction = new CompactionService(upstream, { compactionKey: null, socketCacheSize: 4, compactionKeepItems: 2, background: DEFAULT_BACKGROUND_SETTINGS });
    const shared = new StoredResponseState(store, compaction);
    const socket = new SocketScopedResponseState(shared, new SocketResponseCache(4), compaction);

    const tools = [{ type: 'function', name: 'f', parameters: {} }];
    const unstored = run(request({ store: false, input: [msg('user', 'a')], tools }), [msg('assistant', 'b')], {
      prior: { modelItems: [msg('user', 'earlier')], publicItems: [] },
    });
    await socket.save(unstored);
    const continuing = request({ previousResponseId: unstored.response.id as string });
    const prior = await socket.load(continuing);
    expect(prior!.modelItems.map((i) => (i as any).content)).toEqual(['earlier', 'a', 'b']);
    expect(prior!.tools).toEqual(tools);
    await expect(shared.load(continuing)).rejects.toMatchObject({ code: 'previous_response_not_found' });

    await socket.discard(continuing, 'resp_failed');
    await expect(socket.load(continuing)).rejects.toMatchObject({ code: 'previous_response_not_found' });
  });
});
