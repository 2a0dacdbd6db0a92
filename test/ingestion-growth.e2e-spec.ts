import { toFile } from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { idleHealthMs, probeHealth, stallBoundMs } from './support/hardening/growth.js';

/**
 * Hostile uploads at 1x, 10x and 100x (HTML nesting depth; length of a run
 * without spaces): each ends `completed` or `failed` with `invalid_file`,
 * and `/health`, probed all through its ingestion, answers within a bounded
 * ratio of an idle probe (`stallBoundMs`) taken in the same test. Before ingestion ran in
 * worker threads, 100x depth froze the gateway for minutes and 100x run
 * length (1 MB) for about a minute: the tokenizer was quadratic in a run.
 */

describe('ingestion of hostile files grows without stalling the gateway', () => {
  let stack: GatewayStack;
  let base: string;
  beforeAll(async () => {
    stack = await startStack({ config: { fileSearch: { ingestion: { pollMs: 20, concurrency: 1 } } } });
    base = stack.url.replace(/\/v1$/, '');
  });
  afterAll(() => stack?.close());

  /** Ingests one file while probing `/health`; returns its final state and the slowest probe. */
  async function ingestWhileProbing(name: string, bytes: Buffer): Promise<{ status: string; code: string | undefined; worstMs: number; probes: number }> {
    const file = await stack.openai.files.create({ file: await toFile(bytes, name), purpose: 'assistants' });
    const store = await stack.openai.vectorStores.create({ name });
    await stack.openai.vectorStores.files.create(store.id, { file_id: file.id });
    let worstMs = 0;
    let probes = 0;
    for (;;) {
      const health = await probeHealth(base);
      expect(health.status).toBe(200);
      worstMs = Math.max(worstMs, health.ms);
      probes++;
      const row = await stack.openai.vectorStores.files.retrieve(file.id, { vector_store_id: store.id });
      if (row.status !== 'in_progress') return { status: row.status, code: row.last_error?.code, worstMs, probes };
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  const cases: Array<[string, (scale: number) => [string, Buffer]]> = [
    ['HTML nesting depth (1,000 / 10,000 / 100,000 <div>s)', (n) => ['nested.html', Buffer.from('<div>'.repeat(1000 * n) + 'deep' + '</div>'.repeat(1000 * n))]],
    ['a run without spaces (10 KB / 100 KB / 1 MB)', (n) => ['run.txt', Buffer.from('x'.repeat(10_000 * n))]],
  ];

  it.each(cases)(
    '%s',
    async (_label, make) => {
      const idle = await idleHealthMs(base);
      for (const scale of [1, 10, 100]) {
        const [name, bytes] = make(scale);
        const result = await ingestWhileProbing(name, bytes);
        expect(result.status === 'completed' || (result.status === 'failed' && result.code === 'invalid_file')).toBe(true);
        // A floor of 5 ms on the idle probe: a millisecond answer would make any scheduler hiccup or GC pause a "stall".
        expect(result.worstMs).toBeLessThan(stallBoundMs(idle));
        console.log(`${name} x${scale}: ${result.status} ${result.code ?? ''}, ${result.probes} probes, worst ${result.worstMs.toFixed(1)} ms, idle ${idle.toFixed(1)} ms`);
      }
    },
    60_000,
  );
});
