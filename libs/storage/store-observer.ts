import type { StateStore } from './state-store.interface.js';

/**
 * Told about every store operation (name and outcome, never the data), for
 * latency metrics and spans. Provided under `STORE_OBSERVER` by a host
 * module; without one the store is used as is.
 */
export const STORE_OBSERVER = Symbol('STORE_OBSERVER');

export interface StoreObserver {
  /** Called when an operation starts; the returned function when it settles. */
  operation(name: string, driver: string): (outcome: { error?: unknown }) => void;
}

/** Lifecycle calls happen once, at boot and shutdown: they are not request work. */
const UNOBSERVED = new Set(['init', 'close', 'constructor']);

/**
 * The same store, with each async method reported to the observer. A Proxy
 * keeps it independent of the interface's method list, which grows.
 */
export function observeStore(store: StateStore, driver: string, observer: StoreObserver): StateStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || UNOBSERVED.has(property)) return value;
      return function observed(this: unknown, ...args: unknown[]) {
        const done = observer.operation(property, driver);
        let result: unknown;
        try {
          result = (value as (...a: unknown[]) => unknown).apply(target, args);
        } catch (error) {
          done({ error });
          throw error;
        }
        if (result && typeof (result as Promise<unknown>).then === 'function') {
          (result as Promise<unknown>).then(
            () => done({}),
            (error: unknown) => done({ error }),
          );
        } else {
          done({});
        }
        return result;
      };
    },
  });
}
