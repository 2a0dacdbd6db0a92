import { MemoryStateStore } from './memory/memory-state-store.js';
import { observeStore, type StoreObserver } from './store-observer.js';

function recorder() {
  const events: string[] = [];
  const observer: StoreObserver = {
    operation: (name, driver) => {
      events.push(`start ${name} ${driver}`);
      return ({ error }) => events.push(`end ${name} ${error ? 'error' : 'ok'}`);
    },
  };
  return { events, observer };
}

describe('observeStore', () => {
  it('reports each operation when it starts and when it settles, and passes results through', async () => {
    const inner = new MemoryStateStore();
    await inner.init();
    const { events, observer } = recorder();
    const store = observeStore(inner, 'memory', observer);
    expect(await store.getResponse('resp_missing', null)).toBeNull();
    expect(events).toEqual(['start getResponse memory', 'end getResponse ok']);
  });

  it('reports a failed operation as an error and rethrows it', async () => {
    const inner = new MemoryStateStore();
    await inner.init();
    const { events, observer } = recorder();
    const store = observeStore(inner, 'memory', observer);
    await expect(store.saveResponse({} as any, [])).rejects.toBeDefined();
    expect(events).toEqual(['start saveResponse memory', 'end saveResponse error']);
  });

  it('leaves the lifecycle calls unobserved', async () => {
    const { events, observer } = recorder();
    const store = observeStore(new MemoryStateStore(), 'memory', observer);
    await store.init();
    await store.close();
    expect(events).toEqual([]);
  });
});
