import { Observable, Subject, lastValueFrom, of, toArray } from 'rxjs';
import { answered } from '#edge/testing/answered.js';
import { RpcRunRegistry } from './rpc-run.registry.js';

/** A run that records whether it was torn down (what aborts the upstream request in the loop). */
function run(): { source: Observable<number>; emit: Subject<number>; tornDown: () => boolean } {
  const emit = new Subject<number>();
  let down = false;
  const source = new Observable<number>((sub) => {
    const inner = emit.subscribe(sub);
    return () => {
      down = true;
      inner.unsubscribe();
    };
  });
  return { source, emit, tornDown: () => down };
}

describe('RpcRunRegistry', () => {
  it('the drain first has the transports stop taking requests (once, even when one fails), while the held run goes on to its end', async () => {
    const registry = new RpcRunRegistry();
    const held = run();
    const seen = lastValueFrom(registry.track('held', held.source).pipe(toArray()));
    const order: string[] = [];
    registry.onDrain(() => {
      order.push(`left with ${registry.size} running`);
    });
    registry.onDrain(async () => {
      throw new Error('broker gone');
    });
    const drained = registry.drain(10_000);
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['left with 1 running']);
    held.emit.next(1);
    held.emit.complete();
    await drained;
    await registry.drain(10_000);
    expect(order).toHaveLength(1);
    expect(await seen).toEqual([1]);
  });

  it('cancel(runId) completes that run and tears it down; others go on', async () => {
    const registry = new RpcRunRegistry();
    const a = run();
    const b = run();
    const seenA = lastValueFrom(registry.track('a', a.source).pipe(toArray()));
    const seenB: number[] = [];
    registry.track('b', b.source).subscribe((v) => seenB.push(v));
    a.emit.next(1);
    expect(registry.size).toBe(2);
    registry.cancel('a');
    a.emit.next(2);
    b.emit.next(3);
    expect(await seenA).toEqual([1]);
    expect(a.tornDown()).toBe(true);
    expect(b.tornDown()).toBe(false);
    expect(seenB).toEqual([3]);
    expect(registry.size).toBe(1);
  });

  it('a cancel that overtakes its request stops the run on arrival', async () => {
    const registry = new RpcRunRegistry();
    registry.cancel('early');
    const r = run();
    let subscribed = false;
    const source = new Observable<number>((sub) => {
      subscribed = true;
      return r.source.subscribe(sub);
    });
    expect(await lastValueFrom(registry.track('early', source).pipe(toArray()))).toEqual([]);
    expect(subscribed).toBe(false);
    expect(registry.size).toBe(0);
  });

  it('remembers a bounded number of early cancels', () => {
    const registry = new RpcRunRegistry();
    for (let i = 0; i < 10_000; i++) registry.cancel(`gone-${i}`);
    const r = run();
    // The oldest were forgotten: this run starts normally.
    const seen: number[] = [];
    registry.track('gone-0', r.source).subscribe((v) => seen.push(v));
    r.emit.next(1);
    expect(seen).toEqual([1]);
  });

  it('a run without an id passes its values through, and counts while it runs', () => {
    const registry = new RpcRunRegistry();
    const r = run();
    const seen: number[] = [];
    registry.track(null, r.source).subscribe((v) => seen.push(v));
    expect(registry.size).toBe(1);
    r.emit.next(7);
    r.emit.complete();
    expect(seen).toEqual([7]);
    expect(registry.size).toBe(0);
  });

  it('drain refuses new runs, lets a finishing one end, and cuts the rest with their terminal frame', async () => {
    const registry = new RpcRunRegistry();
    const finishing = run();
    const stuck = run();
    const finished: number[] = [];
    const cut: unknown[] = [];
    registry.track('a', finishing.source).subscribe((v) => finished.push(v));
    registry.track('b', stuck.source, (err) => of(`cut: ${err.code}`) as never).subscribe((v) => cut.push(v));
    const draining = registry.drain(300);
    const refused = await lastValueFrom(registry.track('c', run().source)).catch((e: unknown) => e);
    expect(answered(refused)).toMatchObject({ status: 503, code: 'gateway_draining' });
    finishing.emit.next(1);
    finishing.emit.complete();
    await draining;
    expect(finished).toEqual([1]);
    expect(cut).toEqual(['cut: gateway_shutdown']);
    expect(registry.size).toBe(0);
  });
});
