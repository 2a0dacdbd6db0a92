import { jest } from '@jest/globals';
import { Cancellation } from './cancellation.js';

describe('Cancellation', () => {
  afterEach(() => jest.restoreAllMocks());

  it('runs its listeners when aborted with no signal asked for, and a signal asked for later is already aborted', () => {
    const cancel = new Cancellation();
    const heard: unknown[] = [];
    cancel.addEventListener('abort', () => heard.push(cancel.reason));
    const reason = new Error('client left');
    cancel.abort(reason);
    expect(cancel.aborted).toBe(true);
    expect(heard).toEqual([reason]);
    expect(cancel.signal.aborted).toBe(true);
    expect(cancel.signal.reason).toBe(reason);
  });

  it('aborts with the AbortError an AbortController gives, or the reason it is handed', () => {
    const plain = new Cancellation();
    expect(plain.aborted).toBe(false);
    expect(plain.reason).toBeUndefined();
    plain.abort();
    expect(plain.reason).toBeInstanceOf(DOMException);
    expect((plain.reason as DOMException).name).toBe('AbortError');
    const reason = new Error('client left');
    const given = new Cancellation();
    given.abort(reason);
    given.abort(new Error('second'));
    expect(given.reason).toBe(reason);
  });

  it('gives a real signal that follows it, whether asked for before or after the abort', () => {
    const before = new Cancellation();
    const early = before.signal;
    expect(early).toBeInstanceOf(AbortSignal);
    expect(before.signal).toBe(early);
    const onAbort = jest.fn();
    early.addEventListener('abort', onAbort);
    before.abort('gone');
    expect(early.aborted).toBe(true);
    expect(early.reason).toBe('gone');
    expect(onAbort).toHaveBeenCalledTimes(1);

    const after = new Cancellation();
    after.abort('late');
    expect(after.signal.aborted).toBe(true);
    expect(after.signal.reason).toBe('late');
    expect(() => after.signal.throwIfAborted()).toThrow();
  });

  it('calls each listener once, in order; a removed one or one added after the abort never', () => {
    const cancel = new Cancellation();
    const calls: string[] = [];
    const first = () => calls.push('first');
    const second = () => calls.push('second');
    const removed = () => calls.push('removed');
    cancel.addEventListener('abort', first);
    cancel.addEventListener('abort', removed);
    cancel.addEventListener('abort', second);
    cancel.addEventListener('abort', first);
    cancel.removeEventListener('abort', removed);
    cancel.abort();
    cancel.abort();
    cancel.addEventListener('abort', () => calls.push('late'));
    expect(calls).toEqual(['first', 'second']);
  });

  it('runs the other listeners when one throws, then throws its error to the caller of abort', () => {
    const cancel = new Cancellation();
    const after = jest.fn();
    cancel.addEventListener('abort', () => {
      throw new Error('listener failed');
    });
    cancel.addEventListener('abort', after);
    expect(() => cancel.abort()).toThrow('listener failed');
    expect(after).toHaveBeenCalledTimes(1);
    expect(cancel.aborted).toBe(true);
  });
});
