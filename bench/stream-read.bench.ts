import { Utf8StreamDecoder } from '#upstream/utf8-stream.decoder.js';
import { arg } from './lib/flags.js';

/**
 * `npm run build && node dist/bench/stream-read.bench.js [--bodies=N] [--runs=N]`:
 * two costs of reading a streamed upstream answer, apart from the rest of
 * the exchange. One body is a streamed `[[tokens 20]]` answer in the
 * Responses dialect (26 events, 4 KB of ASCII), in one chunk as it arrives,
 * and again cut into 1 KB reads.
 *
 * Decoding the body to text, a new decoder per body as per upstream exchange:
 * - `TextDecoder('utf-8')` with `stream: true` (ICU), what `UpstreamBody.text` used;
 * - `Utf8StreamDecoder`: `buffer.isUtf8` and `toString` while every chunk is whole UTF-8.
 *
 * Looking for vLLM's echo of the declared tools in each event's text before
 * it is parsed (`echoed-tools.ts`), in a body without one (the common case):
 * - `"tools":[{` searched for in every event;
 * - `[{` first, then the whole pattern only where it is found.
 *
 * Each figure is the least CPU time of N runs of `--bodies` bodies, the two
 * ways alternating run by run (other load on the machine only ever adds to a run).
 */

const BODIES = Number(arg('bodies') ?? 20_000);
const RUNS = Number(arg('runs') ?? 7);

function streamedBody(): Buffer {
  const events: string[] = [];
  const event = (payload: Record<string, unknown>) => events.push(`data: ${JSON.stringify({ ...payload, sequence_number: events.length })}\n\n`);
  const response = { id: 'resp_af6ad183eee78224', object: 'response', model: 'bench', status: 'in_progress', output: [], tools: [], usage: null };
  event({ type: 'response.created', response });
  event({ type: 'response.in_progress', response });
  event({ type: 'response.output_item.added', item: { id: 'msg_1', type: 'message', role: 'assistant', content: [], status: 'in_progress' }, output_index: 0 });
  event({ type: 'response.content_part.added', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
  for (let i = 0; i < 20; i++) event({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: ` word${i}`, logprobs: [] });
  event({ type: 'response.output_text.done', item_id: 'msg_1', output_index: 0, content_index: 0, text: 'words', logprobs: [] });
  event({ type: 'response.completed', response: { ...response, status: 'completed' } });
  return Buffer.from(events.join(''));
}

type Decode = (chunks: readonly Buffer[]) => number;

const textDecoder: Decode = (chunks) => {
  const decoder = new TextDecoder('utf-8');
  let length = 0;
  for (const chunk of chunks) length += decoder.decode(chunk, { stream: true }).length;
  return length + decoder.decode().length;
};

const utf8Stream: Decode = (chunks) => {
  const decoder = new Utf8StreamDecoder();
  let length = 0;
  for (const chunk of chunks) length += decoder.decode(chunk).length;
  return length + decoder.end().length;
};

type Search = (events: readonly string[]) => number;

const wholePattern: Search = (events) => {
  let found = 0;
  for (const event of events) if (event.includes('"tools":[{')) found++;
  return found;
};

const bracketFirst: Search = (events) => {
  let found = 0;
  for (const event of events) if (event.includes('[{') && event.includes('"tools":[{')) found++;
  return found;
};

/** Least CPU time of one run of `BODIES` bodies, in µs per body; checks every body decoded whole. */
function perBodyUs(decode: Decode, chunks: readonly Buffer[], expected: number): number {
  const start = process.cpuUsage();
  for (let b = 0; b < BODIES; b++) if (decode(chunks) !== expected) throw new Error('a body decoded short');
  const used = process.cpuUsage(start);
  return (used.user + used.system) / BODIES;
}

/** The same for the echo search over one body's events' texts; checks neither finds an echo. */
function searchUs(search: Search, events: readonly string[]): number {
  const start = process.cpuUsage();
  for (let b = 0; b < BODIES; b++) if (search(events) !== 0) throw new Error('an echo where there is none');
  const used = process.cpuUsage(start);
  return (used.user + used.system) / BODIES;
}

function main(): void {
  const body = streamedBody();
  const text = body.toString('utf8');
  const shapes: Array<[string, Buffer[]]> = [
    ['one read', [body]],
    ['1 KB reads', []],
  ];
  for (let at = 0; at < body.length; at += 1024) shapes[1][1].push(body.subarray(at, at + 1024));
  console.log(`${BODIES} bodies of ${body.length} bytes per run, least CPU time of ${RUNS} runs\n`);
  console.log('| body | TextDecoder µs/body | Utf8StreamDecoder µs/body | ratio |');
  console.log('| --- | --- | --- | --- |');
  for (const [name, chunks] of shapes) {
    let icu = Infinity;
    let own = Infinity;
    for (let run = 0; run < RUNS; run++) {
      icu = Math.min(icu, perBodyUs(textDecoder, chunks, text.length));
      own = Math.min(own, perBodyUs(utf8Stream, chunks, text.length));
    }
    console.log(`| ${name} | ${icu.toFixed(2)} | ${own.toFixed(2)} | ${(icu / own).toFixed(1)}× |`);
  }
  // Each event's text as the reader hands it to the parse, copied so that no search result is kept between runs.
  const events = text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => Buffer.from(event.slice('data: '.length)).toString());
  let whole = Infinity;
  let bracket = Infinity;
  for (let run = 0; run < RUNS; run++) {
    whole = Math.min(whole, searchUs(wholePattern, events));
    bracket = Math.min(bracket, searchUs(bracketFirst, events));
  }
  console.log(`\n| echo search over a body's ${events.length} events | \`"tools":[{\` µs/body | \`[{\` first µs/body | ratio |`);
  console.log('| --- | --- | --- | --- |');
  console.log(`| no echo | ${whole.toFixed(2)} | ${bracket.toFixed(2)} | ${(whole / bracket).toFixed(1)}× |`);
}

main();
