import { AIMessageChunk, HumanMessage } from '@langchain/core/messages';
import { concat } from '@langchain/core/utils/stream';
import { ChatOpenAI } from '@langchain/openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { FakeSearxng } from './support/web-search/fake-searxng.js';

/**
 * LangChain (`@langchain/openai` on the Responses API) against the gateway:
 * it shows reasoning only from `summary[]` and the summary events, feeds a
 * streamed aggregate back as history, keeps reasoning across `store: false`
 * turns (`zdrEnabled`) only when the item has `encrypted_content`, and builds
 * citations from `url_citation` annotations.
 */
const KEY = 'langchain-test-key-0123456789';
/** LangChain sends `reasoning` only for ids it takes for reasoning models. */
const REASONING_MODEL = 'gpt-5-switchyard';

describe('LangChain ChatOpenAI (Responses API) through the gateway', () => {
  let stack: GatewayStack;
  let searxng: FakeSearxng;

  beforeAll(async () => {
    searxng = await FakeSearxng.start();
    stack = await startStack({ config: { state: { compactionKey: KEY }, webSearch: { provider: 'searxng', searxng: { baseUrl: searxng.baseUrl } } } });
  });
  afterAll(async () => {
    await stack?.close();
    await searxng?.close();
  });

  /** Bodies LangChain sent, to see its side of the wire. */
  const sent: any[] = [];
  const recordingFetch: typeof fetch = async (url, init) => {
    if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
    return fetch(url, init);
  };
  const chat = (options: Partial<ConstructorParameters<typeof ChatOpenAI>[0]> = {}) =>
    new ChatOpenAI({
      model: REASONING_MODEL,
      apiKey: 'sk-test',
      configuration: { baseURL: stack.url, fetch: recordingFetch },
      useResponsesApi: true,
      reasoning: { effort: 'low', summary: 'auto' },
      maxRetries: 0,
      ...options,
    });
  const upstreamInput = (): any[] => (stack.simulator.requests.at(-1)!.body as any).input;
  const reasoningText = (content: unknown): string =>
    (Array.isArray(content) ? content : [])
      .filter((b: any) => b.type === 'reasoning')
      .map((b: any) => b.reasoning)
      .join('');

  it('shows the reasoning as its summary (invoke)', async () => {
    const message = await chat().invoke('[[reason Check the forecast first.]] [[say Rain.]]');
    expect(reasoningText(message.content)).toBe('Check the forecast first.');
    expect(message.additional_kwargs.reasoning).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Check the forecast first.' }] });
    expect(message.text).toBe('Rain.');
  });

  it('streams the summary, and the aggregate fed back as history carries the reasoning to the model', async () => {
    const model = chat();
    let aggregate: AIMessageChunk | undefined;
    for await (const chunk of await model.stream('Weather? [[reason Think twice.]] [[say Sun.]]')) aggregate = aggregate ? concat(aggregate, chunk) : chunk;
    expect(reasoningText(aggregate!.content)).toBe('Think twice.');
    expect(aggregate!.text).toBe('Sun.');
    const next = await model.invoke([new HumanMessage('Weather?'), aggregate!, new HumanMessage('Again? [[say Sun again.]]')]);
    expect(next.text).toBe('Sun again.');
    expect(upstreamInput().map((i: any) => i.type)).toEqual(['message', 'reasoning', 'message', 'message']);
    expect(upstreamInput()[1].content).toEqual([{ type: 'reasoning_text', text: 'Think twice.' }]);
  });

  it('keeps reasoning across store:false turns (zdrEnabled, include) through encrypted_content', async () => {
    const model = chat({ zdrEnabled: true }).withConfig({ include: ['reasoning.encrypted_content'] } as any);
    const first = await model.invoke('Plan? [[reason Step one, then two.]] [[say Planned.]]');
    expect((first.additional_kwargs.reasoning as any).encrypted_content).toMatch(/^syr1\./);
    const next = await model.invoke([new HumanMessage('Plan?'), first, new HumanMessage('Go. [[say Going.]]')]);
    expect(next.text).toBe('Going.');
    // LangChain stored nothing and sent the reasoning item back whole, token included.
    expect(sent.at(-1)).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
    const sentReasoning = sent.at(-1).input.find((i: any) => i.type === 'reasoning');
    expect(sentReasoning.encrypted_content).toBe((first.additional_kwargs.reasoning as any).encrypted_content);
    expect(upstreamInput().find((i: any) => i.type === 'reasoning')?.content).toEqual([{ type: 'reasoning_text', text: 'Step one, then two.' }]);
  });

  it('shows web search citations from url_citation annotations', async () => {
    const message = await chat({ reasoning: undefined, model: 'switchyard-sim' })
      .bindTools([{ type: 'web_search' } as any])
      .invoke('News? [[call web_search {"query":"node 22 release"}]]');
    const block = (message.content as any[]).find((b) => b.type === 'text');
    const citations = block.annotations.filter((a: any) => a.source === 'url_citation');
    expect(citations.length).toBeGreaterThan(0);
    for (const c of citations) {
      expect(c).toEqual({
        type: 'citation',
        source: 'url_citation',
        url: expect.stringMatching(/^https:\/\/node-22-release\.example\//),
        title: expect.any(String),
        startIndex: expect.any(Number),
        endIndex: expect.any(Number),
      });
      expect(block.text.slice(c.startIndex, c.endIndex)).toBe(c.url);
    }
  });
});
