import { firstValueFrom, Observable, toArray } from 'rxjs';
import { UpstreamHttpError, UpstreamUnavailableError } from '#tool-sdk/errors.js';
import type { ModelEvent, ModelRequest } from '#core/protocol/model-events.js';
import type { ModelInfo, UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import { affinityKey, UpstreamPool } from './upstream-pool.client.js';

/**
 * A replica whose behaviour each test scripts: the pool only sees the
 * UpstreamClient interface, so this checks its choices, not HTTP (the
 * end-to-end suite runs it against real simulated servers).
 */
class ScriptedReplica implements UpstreamClient {
  readonly dialect = 'responses' as const;
  calls = 0;
  behaviour: 'ok' | 'down' | 'midstream' | 'badrequest' | 'hang' = 'ok';
  constructor(readonly name: string) {}
  infer(): Observable<ModelEvent> {
    this.calls++;
    return new Observable<ModelEvent>((sub) => {
      if (this.behaviour === 'down') return sub.error(new UpstreamUnavailableError(`${this.name} refused`));
      if (this.behaviour === 'badrequest') return sub.error(new UpstreamHttpError('bad', 400));
      if (this.behaviour === 'hang') return;
      sub.next({ type: 'text.delta', delta: this.name } as unknown as ModelEvent);
      if (this.behaviour === 'midstream') return sub.error(new UpstreamUnavailableError(`${this.name} reset`));
      sub.complete();
    });
  }
  async listModels(): Promise<ModelInfo[]> {
    if (this.behaviour === 'down') throw new UpstreamUnavailableError('down');
    return [{ id: 'm', object: 'model', created: 0, owned_by: this.name }];
  }
  async probe(): Promise<void> {}
  tokenized = 0;
  async tokenize(): Promise<number | null> {
    this.tokenized++;
    if (this.behaviour === 'down') throw new UpstreamUnavailableError(`${this.name} refused`);
    if (this.behaviour === 'badrequest') throw new UpstreamHttpError('bad', 400);
    return this.name === 'a' ? 11 : 22;
  }
}

const request = (first: string, extra: Partial<ModelRequest> = {}): ModelRequest =>
  ({ model: 'm', input: [{ type: 'message', role: 'user', content: first }], instructions: null, tools: [], stream: true, ...extra }) as unknown as ModelRequest;

describe('UpstreamPool', () => {
  let a: ScriptedReplica;
  let b: ScriptedReplica;
  let pool: UpstreamPool;

  beforeEach(() => {
    a = new ScriptedReplica('a');
    b = new ScriptedReplica('b');
    pool = new UpstreamPool(
      [
        { url: 'http://a/v1', client: a },
        { url: 'http://b/v1', client: b },
      ],
      { healthCheckMs: 60_000 },
    );
  });
  afterEach(() => pool.close());

  const run = (r: ModelRequest) => firstValueFrom(pool.infer(r).pipe(toArray()));

  it('keys affinity on prompt_cache_key, else on the transcript opening', () => {
    expect(affinityKey(request('x', { prompt_cache_key: 'k' } as any))).toBe('key:k');
    const one = request('hello');
    const later = { ...one, input: [...(one.input as any[]), { type: 'message', role: 'assistant', content: 'hi' }] } as ModelRequest;
    expect(affinityKey(later)).toBe(affinityKey(one));
    expect(affinityKey(request('other'))).not.toBe(affinityKey(one));
  });

  it('sends one key to one replica every time', async () => {
    for (let i = 0; i < 5; i++) await run(request('same'));
    expect([a.calls, b.calls].sort()).toEqual([0, 5]);
  });

  it('fails over before the first event, and marks the failed replica down', async () => {
    a.behaviour = 'down';
    b.behaviour = 'down';
    await expect(run(request('x'))).rejects.toBeInstanceOf(UpstreamUnavailableError);
    expect(a.calls + b.calls).toBe(2);
    a.behaviour = 'ok';
    const events = await run(request('y'));
    expect(events).toHaveLength(1);
    expect(pool.status().every((r) => r.healthy === (r.url === 'http://a/v1'))).toBe(true);
  });

  it('never replays a request that already produced events', async () => {
    a.behaviour = 'midstream';
    b.behaviour = 'midstream';
    await expect(run(request('z'))).rejects.toBeInstanceOf(UpstreamUnavailableError);
    expect(a.calls + b.calls).toBe(1);
  });

  it('does not retry the request’s own errors (4xx) elsewhere', async () => {
    a.behaviour = 'badrequest';
    b.behaviour = 'badrequest';
    await expect(run(request('q'))).rejects.toBeInstanceOf(UpstreamHttpError);
    expect(a.calls + b.calls).toBe(1);
    expect(pool.status().every((r) => r.healthy)).toBe(true);
  });

  it('bounds the affine replica’s load: past its share, the least loaded one takes requests', () => {
    a.behaviour = 'hang';
    b.behaviour = 'hang';
    const subs = Array.from({ length: 10 }, () => pool.infer(request('hot')).subscribe());
    const loads = pool
      .status()
      .map((r) => r.outstanding)
      .sort((x, y) => x - y);
    expect(loads[0] + loads[1]).toBe(10);
    expect(loads[0]).toBeGreaterThanOrEqual(3);
    for (const s of subs) s.unsubscribe();
    expect(pool.status().map((r) => r.outstanding)).toEqual([0, 0]);
  });

  it('is ready while any replica answers, and merges model lists', async () => {
    a.behaviour = 'down';
    expect((await pool.listModels()).map((m) => m.id)).toEqual(['m']);
    await expect(pool.probe()).resolves.toBeUndefined();
  });

  describe('tokenize', () => {
    const prompt = { model: 'm', instructions: null, input: [], tools: [] };

    it('asks one replica, and the next only when that one is down', async () => {
      expect(await pool.tokenize(prompt)).toBe(11);
      expect([a.tokenized, b.tokenized]).toEqual([1, 0]);
      a.behaviour = 'down';
      expect(await pool.tokenize(prompt)).toBe(22);
      expect([a.tokenized, b.tokenized]).toEqual([2, 1]);
      b.behaviour = 'down';
      await expect(pool.tokenize(prompt)).rejects.toBeInstanceOf(UpstreamUnavailableError);
    });

    it('passes a request error on without trying elsewhere', async () => {
      a.behaviour = 'badrequest';
      b.behaviour = 'badrequest';
      await expect(pool.tokenize(prompt)).rejects.toBeInstanceOf(UpstreamHttpError);
      expect(a.tokenized + b.tokenized).toBe(1);
    });
  });
});
