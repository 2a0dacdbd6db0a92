import type { FunctionToolDef, ModelItem } from '#tool-sdk/items.js';
import type { ModelRequest } from '#core/protocol/model-events.js';
import { freezeJson, jsonChunks, rememberJson } from '#tool-sdk/helpers/frozen-json.js';
import { toResponsesRequest } from '#upstream/responses-request.mapper.js';
import { toChatCompletionRequest } from '#upstream/chat-request.mapper.js';
import { median } from './lib/stats.js';
import { arg } from './lib/flags.js';

/**
 * `npm run build && node dist/bench/kept-tool-wire.bench.js [--rounds=N] [--batch=N]`:
 * what the upstream mappers' cache of a kept tool list's wire form saves
 * (`wireTools` / `chatTools`, `mapFrozenOnce`). Each case builds the upstream
 * body of a one-message request declaring 100 function tools and turns it into
 * the bytes the transport writes (`jsonChunks`), once with the sealed
 * registry's frozen list (a cache hit: the wire form and its kept text are
 * reused) and once with an unfrozen copy of the same list (what every request
 * paid without the cache: the list mapped, serialized and encoded). Batches
 * of the two alternate (paired), so a busy machine slows both alike; the
 * figure is the median CPU time per request over the rounds.
 *
 * The answer cases write a completed response object the way the HTTP
 * responder does (`jsonChunks`): echoing the kept list (its kept bytes
 * spliced in) and, for the floor, the same object declaring nothing.
 */

const ROUNDS = Number(arg('rounds') ?? 15);
const BATCH = Number(arg('batch') ?? 400);

function tools(count: number): FunctionToolDef[] {
  return Array.from({ length: count }, (_, i) => ({
    type: 'function',
    name: `tool_${i}`,
    description: `Looks up record ${i} of the inventory and says what it holds, where it is and who moved it last.`,
    parameters: { type: 'object', properties: { id: { type: 'string', description: 'the record id' }, fields: { type: 'array', items: { type: 'string' } } }, required: ['id'] },
    strict: false,
  }));
}

const input: ModelItem[] = [{ type: 'message', role: 'user', content: 'What is in record 7?' } as ModelItem];
const kept = freezeJson(tools(100));
const request = (list: readonly FunctionToolDef[]): ModelRequest =>
  ({ model: 'm', input, instructions: null, tools: list, tool_choice: 'auto', parallel_tool_calls: true, stream: true }) as unknown as ModelRequest;

/** A completed blocking answer of 20 tokens, as the gateway writes one, echoing `declared`. */
const answer = (declared: readonly unknown[]) => ({
  id: 'resp_68f0c2a4d1e84b5c9a7e3f21b6d40c87',
  object: 'response',
  created_at: 1765100000,
  status: 'completed',
  background: false,
  completed_at: 1765100001,
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  max_tool_calls: null,
  model: 'bench',
  output: [
    {
      id: 'msg_5d2e8a0f7c3b41e69a1d',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'token '.repeat(20), annotations: [], logprobs: [] }],
    },
  ],
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  service_tier: 'auto',
  store: false,
  temperature: 1,
  text: { format: { type: 'text' }, verbosity: 'medium' },
  tool_choice: 'auto',
  tools: declared,
  top_logprobs: 0,
  top_p: 1,
  truncation: 'disabled',
  usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 32 },
  user: null,
  metadata: {},
});
/** The sealed registry's public declarations: frozen, their text kept (`ToolRegistry.seal`). */
const echoed = freezeJson(tools(100));
rememberJson(echoed);

/** CPU microseconds per request of `BATCH` bodies built and encoded by `build`. */
function perRequestUs(build: () => unknown): number {
  const start = process.cpuUsage();
  let bytes = 0;
  for (let i = 0; i < BATCH; i++) for (const chunk of jsonChunks(build())) bytes += chunk.length;
  const used = process.cpuUsage(start);
  if (bytes === 0) throw new Error('nothing was written');
  return (used.user + used.system) / BATCH;
}

function main(): void {
  const cases = {
    'responses, kept (cache hit)': () => toResponsesRequest(request(kept)),
    'responses, unfrozen copy': () => toResponsesRequest(request([...kept])),
    'chat, kept (cache hit)': () => toChatCompletionRequest(request(kept)),
    'chat, unfrozen copy': () => toChatCompletionRequest(request([...kept])),
    'answer echoing the kept list': () => answer(echoed),
    'answer declaring nothing': () => answer([]),
  };
  if (!Buffer.concat(jsonChunks(answer(echoed))).equals(Buffer.from(JSON.stringify(answer(echoed))))) throw new Error('the spliced answer differs from its JSON');
  // Both forms give the same bytes: the cache changes the cost, not the body.
  for (const [hit, miss] of [
    ['responses, kept (cache hit)', 'responses, unfrozen copy'],
    ['chat, kept (cache hit)', 'chat, unfrozen copy'],
  ] as const) {
    const a = Buffer.concat(jsonChunks(cases[hit]()));
    const b = Buffer.concat(jsonChunks(cases[miss]()));
    if (!a.equals(b)) throw new Error(`${hit} and ${miss} wrote different bodies`);
  }
  const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, [] as number[]]));
  for (const build of Object.values(cases)) perRequestUs(build);
  for (let r = 0; r < ROUNDS; r++) for (const [name, build] of Object.entries(cases)) samples[name].push(perRequestUs(build));
  console.log(`| case | CPU µs per request (median of ${ROUNDS} batches of ${BATCH}) |`);
  console.log('| --- | --- |');
  for (const [name, values] of Object.entries(samples)) console.log(`| ${name} | ${median(values).toFixed(1)} |`);
}

main();
