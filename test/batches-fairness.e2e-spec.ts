import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import OpenAI, { toFile } from 'openai';
import { postgresBackend, type Backend } from './support/file-search/backends.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { until } from './support/until.js';

/**
 * A tenant's 50,000-line batch against another tenant's interactive
 * requests and a third tenant's small batch, on SQLite and PostgreSQL: while
 * the interactive request is served, the batch steps aside to one line at a
 * time (as the upstream sees them) but keeps going, the small batch is not
 * queued behind the large one, and a cancel under load leaves every line of
 * the input in exactly one of the two files. Tenant B's latency beside the
 * batch is logged, not asserted: on a shared machine it measures the machine
 * as much as the gateway.
 */

const TOTAL = 50_000;
const FINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);
const KEYS = { a: 'sk-tenant-a', b: 'sk-tenant-b', c: 'sk-tenant-c' };

const embeddingLine = (i: number) => JSON.stringify({ custom_id: `l${i}`, method: 'POST', url: '/v1/embeddings', body: { model: 'switchyard-sim', input: `line ${i}` } });

async function createBatch(client: OpenAI, n: number, prefix = ''): Promise<string> {
  const text = Array.from({ length: n }, (_, i) => embeddingLine(i).replace(`"l${i}"`, `"${prefix}l${i}"`)).join('\n') + '\n';
  const file = await client.files.create({ file: await toFile(Buffer.from(text), 'lines.jsonl'), purpose: 'batch' });
  return (await client.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' })).id;
}

async function settle(client: OpenAI, id: string, timeoutMs = 120_000) {
  for (const deadline = Date.now() + timeoutMs; ;) {
    const batch = await client.batches.retrieve(id);
    if (FINAL.has(batch.status)) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${batch.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function customIds(client: OpenAI, fileId: string | null | undefined): Promise<string[]> {
  if (!fileId) return [];
  const text = await (await client.files.content(fileId)).text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).custom_id as string);
}

/** Latencies of `n` requests one after another, in ms. */
async function timings(n: number, call: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    out.push(performance.now() - t0);
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * The batch lines (embeddings requests) the upstream receives from now on, and the most it had in flight at once
 * when one arrived: the count only rises at an arrival, so that is where its peak is.
 */
function watchBatchLines(stack: GatewayStack): { stop(): { count: number; peak: number } } {
  const seen = { count: 0, peak: 0 };
  const onLine = () => {
    seen.count++;
    seen.peak = Math.max(seen.peak, stack.simulator.embeddingsActive);
  };
  stack.simulator.on('embedding', onLine);
  return {
    stop: () => {
      stack.simulator.off('embedding', onLine);
      return { ...seen };
    },
  };
}

/** A streamed chat completion's text, read to its end. */
async function streamText(client: OpenAI): Promise<string> {
  const stream = await client.chat.completions.create({ model: 'switchyard-sim', messages: [{ role: 'user', content: '[[say hello]]' }], stream: true }, { timeout: 200_000 });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  return text;
}

describe.each(['sqlite', 'postgres'] as const)('a 50,000-line batch beside interactive tenants on %s', (kind) => {
  let stack: GatewayStack;
  let backend: Backend | undefined;
  let dir = '';
  const clients = {} as Record<keyof typeof KEYS, OpenAI>;

  beforeAll(async () => {
    let storage: Record<string, unknown>;
    if (kind === 'postgres') {
      backend = await postgresBackend();
      storage = backend.storage;
    } else {
      dir = mkdtempSync(join(tmpdir(), 'sy-batch-fair-'));
      storage = { driver: 'sqlite', sqlitePath: join(dir, 'state.sqlite') };
    }
    // Each embeddings line takes the upstream a few ms, as a real server's would: lines run at once overlap there.
    stack = await startStack({
      simulator: { embeddingDelayMs: 5 },
      config: { storage, auth: { apiKeys: Object.values(KEYS) }, batches: { pollMs: 30, maxConcurrentRequests: 8 } },
    });
    for (const [name, key] of Object.entries(KEYS)) clients[name as keyof typeof KEYS] = new OpenAI({ baseURL: stack.url, apiKey: key, maxRetries: 0, timeout: 30_000 });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await backend?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the batch one line at a time while tenant B is served, runs tenant C beside it, and cancels with every line in one file', async () => {
    const ask = () => clients.b.chat.completions.create({ model: 'switchyard-sim', messages: [{ role: 'user', content: '[[say hello]]' }] });
    await timings(10, ask); // warm-up: connections, first compiles
    const idleBefore = await timings(40, ask);

    // Tenant B's streamed request, held at its first token: B is being served for as long as the test needs.
    const release = stack.simulator.holdFirstTokens();
    let held: Promise<string> | undefined;
    const lines = watchBatchLines(stack);
    try {
      held = streamText(clients.b);
      await until(
        () => stack.simulator.stats.active,
        (n) => n === 1,
        "tenant B's request to reach the upstream",
      );
      const big = await createBatch(clients.a, TOTAL);
      // Tenant C's small batch, created behind 50,000 of A's lines.
      const small = await createBatch(clients.c, 20, 'c');
      const smallDone = await settle(clients.c, small, 120_000);
      const bigThen = await clients.a.batches.retrieve(big);
      const heldFor = lines.stop();

      // While B is served the batch lines step aside to one at a time: the upstream never had two at once.
      expect(heldFor.peak).toBe(1);
      // C's batch finished while A's was still running: it was not queued behind A's lines.
      expect(smallDone.status).toBe('completed');
      expect(smallDone.request_counts).toEqual({ total: 20, completed: 20, failed: 0 });
      expect(bigThen.status).toBe('in_progress');
      // A's batch kept going while B was being served: it steps aside, it does not stop.
      expect(bigThen.request_counts!.completed).toBeGreaterThan(0);
      expect(heldFor.count).toBeGreaterThanOrEqual(20 + bigThen.request_counts!.completed);
      expect(stack.simulator.stats.active).toBe(1);
      release();
      expect(await held).toBe('hello');

      // Tenant B's requests one after another beside the batch: their latency is reported, not asserted (a loaded
      // machine decides it as much as the gateway does; the share lines get is what the assertions above check).
      const busy = await timings(40, ask);

      // Cancel under load: every one of the 50,000 lines once, in the output or the error file.
      const cancelling = await clients.a.batches.cancel(big);
      expect(cancelling.status).toBe('cancelling');
      const done = await settle(clients.a, big);
      expect(done.status).toBe('cancelled');
      const output = await customIds(clients.a, done.output_file_id);
      const errors = await customIds(clients.a, done.error_file_id);
      expect(output.length).toBe(done.request_counts!.completed);
      expect(output.length + errors.length).toBe(TOTAL);
      expect(new Set([...output, ...errors]).size).toBe(TOTAL);

      const idle = median([...idleBefore, ...(await timings(40, ask))]);
      console.log(`${kind}: tenant B p50 idle ${idle.toFixed(2)} ms, beside the batch ${median(busy).toFixed(2)} ms (x${(median(busy) / idle).toFixed(2)}), not asserted`);
    } finally {
      release();
      lines.stop();
      await held?.catch(() => undefined);
    }
  }, 240_000);
});
