import { mapMessagesRequest } from '#messages/request/messages-request.mapper.js';
import { ThinkingSigner } from '#messages/thinking/thinking-signer.js';
import { percentile } from './lib/stats.js';

/**
 * `npm run build && node dist/bench/messages-history.bench.js`: the cost of
 * mapping a Claude Code request whose history grows, context edits included
 * (both edits active, every old tool result cleared), in this process.
 * Reported per tool round trip as a ratio to the smallest session measured
 * in the same run, so machine load cancels out: a ratio near 1 at 10x and
 * 100x means the cost grows linearly with the history.
 */
const SIZES = [30, 300, 3000];
const BUDGET_MS = 800;
/** Sizes are interleaved over rounds, and each size's median round kept, so a burst of outside load hits all sizes alike. */
const ROUNDS = 5;

function session(n: number, signer: ThinkingSigner): Record<string, unknown> {
  const messages: unknown[] = [{ role: 'user', content: 'Fix the build.' }];
  for (let i = 0; i < n; i++) {
    const thinking = `Step ${i}: read the log and pick the next command.`;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking, signature: signer.sign(thinking) },
        { type: 'text', text: `Running step ${i}.` },
        { type: 'tool_use', id: `toolu_${i}`, name: i % 3 === 2 ? 'Read' : 'Bash', input: { command: `make step-${i}`, description: 'Run one build step' } },
      ],
    });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `line of build output ${i}\n`.repeat(30) }] });
    if (i % 50 === 49) messages.push({ role: 'system', content: `Reminder ${i}: the user is watching.` });
  }
  messages.push({ role: 'user', content: 'Go on.' });
  return {
    model: 'm',
    max_tokens: 32000,
    stream: true,
    thinking: { type: 'adaptive' },
    output_config: { effort: 'medium' },
    context_management: {
      edits: [
        { type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 1 } },
        { type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 10 }, keep: { type: 'tool_uses', value: 3 } },
      ],
    },
    messages,
  };
}

function measure(body: Record<string, unknown>, signer: ThinkingSigner): number {
  const samples: number[] = [];
  const until = performance.now() + BUDGET_MS;
  while (performance.now() < until || samples.length < 5) {
    const started = performance.now();
    mapMessagesRequest(body, null, { signer });
    samples.push(performance.now() - started);
  }
  return percentile(
    samples.sort((a, b) => a - b),
    50,
  );
}

function main(): void {
  const signer = new ThinkingSigner('bench-key-bench-key-bench-key-32');
  const bodies = SIZES.map((n) => session(n, signer));
  bodies.forEach((body) => measure(body, signer)); // warm-up: JIT and caches
  const perRound = SIZES.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) bodies.forEach((body, i) => perRound[i].push(measure(body, signer)));
  const rows = SIZES.map((n, i) => {
    const ms = percentile(
      perRound[i].sort((a, b) => a - b),
      50,
    );
    return { n, ms, perRoundTripUs: (ms * 1000) / n };
  });
  const base = rows[0].perRoundTripUs;
  console.log('| tool round trips | p50 per request | per round trip | ratio to 30 |');
  console.log('| --- | --- | --- | --- |');
  for (const r of rows) console.log(`| ${r.n} | ${r.ms.toFixed(3)} ms | ${r.perRoundTripUs.toFixed(2)} µs | ${(r.perRoundTripUs / base).toFixed(2)} |`);
}

main();
