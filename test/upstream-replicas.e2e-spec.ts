import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { UPSTREAM_CLIENT } from '#core/upstream/upstream-client.interface.js';
import type { UpstreamPool } from '#upstream/upstream-pool.client.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { until } from './support/until.js';

/** The opening user text of each inference request a simulator received (the conversation marker). */
function openers(sim: SimulatedUpstream): string[] {
  return sim.requests
    .filter((r) => r.path === '/v1/responses')
    .map((r) => {
      const first = (r.body as any).input?.[0];
      const content = first?.content;
      return typeof content === 'string' ? content : (content?.[0]?.text ?? '');
    });
}

describe('several model servers behind one gateway (two simulated upstreams)', () => {
  let s1: SimulatedUpstream;
  let s2: SimulatedUpstream;
  let port1: number;
  let stack: GatewayStack;
  /**
   * The same two replicas behind a gateway whose health checks come once a minute: routing by
   * affinity and load is checked there. On `stack`, checked every 100 ms, a probe slower than its
   * one-second timeout on a loaded machine rightly marks a replica down and moves its conversations.
   */
  let calm: GatewayStack;
  const pool = () => stack.app.get(UPSTREAM_CLIENT) as UpstreamPool;

  beforeAll(async () => {
    s1 = new SimulatedUpstream({});
    s2 = new SimulatedUpstream({});
    port1 = (await s1.listen(0, '127.0.0.1')).port;
    await s2.listen(0, '127.0.0.1');
    stack = await startStack({ upstreamUrl: `${s1.url},${s2.url}`, config: { upstream: { healthCheckMs: 100 } } });
    calm = await startStack({ upstreamUrl: `${s1.url},${s2.url}`, config: { upstream: { healthCheckMs: 60_000 } } });
  });
  afterAll(async () => {
    await calm?.close();
    await stack.close();
    await Promise.all([s1.close(), s2.close()]);
  });

  /** Which simulator served the conversation opened with `marker` (throws if both did). */
  const servedBy = (marker: string): SimulatedUpstream[] => [s1, s2].filter((s) => openers(s).includes(marker));

  it('keeps every turn of a conversation on one replica, and spreads conversations over both', async () => {
    for (let c = 0; c < 16; c++) {
      let previous: string | undefined;
      for (let turn = 0; turn < 2; turn++) {
        const r = await calm.openai.responses.create({
          model: 'm',
          input: turn === 0 ? `conversation ${c}` : `[[say turn ${turn}]]`,
          previous_response_id: previous,
        });
        previous = r.id;
      }
    }
    const counts = [0, 0];
    for (let c = 0; c < 16; c++) {
      const sims = servedBy(`conversation ${c}`);
      expect(sims).toHaveLength(1);
      const sim = sims[0];
      // Both turns went there.
      expect(openers(sim).filter((o) => o === `conversation ${c}`)).toHaveLength(2);
      counts[sim === s1 ? 0 : 1]++;
    }
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[1]).toBeGreaterThan(0);
  }, 90_000);

  it('gives way to the less loaded replica when one conversation floods its own', async () => {
    const before = [s1.stats.requests, s2.stats.requests];
    await Promise.all(
      Array.from({ length: 8 }, () => calm.openai.responses.create({ model: 'm', input: 'flood [[tokens 20]] [[delay token=20]]', prompt_cache_key: 'one-hot-conversation' })),
    );
    const served = [s1.stats.requests - before[0], s2.stats.requests - before[1]];
    expect(served[0] + served[1]).toBe(8);
    expect(Math.min(...served)).toBeGreaterThan(0);
  });

  it('fails a stream over, never replays it; later turns move to the healthy replica and come back after recovery', async () => {
    // A conversation that lives on s1.
    let opener = '';
    let first: any;
    for (let c = 0; !opener; c++) {
      const candidate = `pinned ${c}`;
      const r = await stack.openai.responses.create({ model: 'm', input: candidate });
      if (servedBy(candidate)[0] === s1) {
        opener = candidate;
        first = r;
      }
    }

    // A turn streaming from s1 when s1 dies ends failed, and s2 never sees it.
    const stream = await stack.openai.responses.create({
      model: 'm',
      previous_response_id: first.id,
      input: 'the long one [[tokens 300]] [[delay token=20]]',
      stream: true,
    });
    const types: string[] = [];
    let killed: Promise<void> | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta' && !killed) killed = s1.close();
    }
    await killed;
    expect(types[types.length - 1]).toBe('response.failed');
    expect(s2.requests.some((r) => JSON.stringify(r.body).includes('the long one'))).toBe(false);

    // The next turn of that conversation is served by s2.
    const moved = await stack.openai.responses.create({ model: 'm', previous_response_id: first.id, input: '[[say on the other one]]' });
    expect(moved.output_text).toBe('on the other one');
    expect(openers(s2)).toContain(opener);
    expect(
      pool()
        .status()
        .find((r) => r.url === s1.url)?.healthy,
    ).toBe(false);

    // s1 returns on its port: the health check brings it back, and the conversation with it.
    const url1 = s1.url;
    s1 = new SimulatedUpstream({});
    await s1.listen(port1, '127.0.0.1');
    await until(
      () =>
        pool()
          .status()
          .find((r) => r.url === url1)?.healthy,
      (h) => h === true,
      's1 to be healthy again',
    );
    const back = await stack.openai.responses.create({ model: 'm', previous_response_id: first.id, input: '[[say home again]]' });
    expect(back.output_text).toBe('home again');
    expect(openers(s1)).toContain(opener);
  });

  it('routes by model when the replicas serve different ones', async () => {
    const a = new SimulatedUpstream({ model: 'model-a' });
    const b = new SimulatedUpstream({ model: 'model-b' });
    await a.listen(0, '127.0.0.1');
    await b.listen(0, '127.0.0.1');
    const routed = await startStack({ upstreamUrl: `${a.url},${b.url}`, config: { upstream: { healthCheckMs: 100 } } });
    try {
      await until(() => (routed.app.get(UPSTREAM_CLIENT) as UpstreamPool).status().every((r) => r.models !== null), Boolean, 'the first health check');
      for (let i = 0; i < 6; i++) {
        await routed.openai.responses.create({ model: 'model-a', input: `for a ${i}` });
        await routed.openai.responses.create({ model: 'model-b', input: `for b ${i}` });
      }
      expect(openers(a).filter((o) => o.startsWith('for a'))).toHaveLength(6);
      expect(openers(b).filter((o) => o.startsWith('for b'))).toHaveLength(6);
      const models = (await routed.openai.models.list()).data.map((m) => m.id).sort();
      expect(models).toEqual(['model-a', 'model-b']);
    } finally {
      await routed.close();
      await Promise.all([a.close(), b.close()]);
    }
  });
});
