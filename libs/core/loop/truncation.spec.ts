import type { ModelItem } from '#tool-sdk/items.js';
import { truncateOldest } from './truncation.js';

const user = (text: string): ModelItem => ({ type: 'message', role: 'user', content: text });
const call = (id: string): ModelItem => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' });
const output = (id: string): ModelItem => ({ type: 'function_call_output', call_id: id, output: 'o' });
const size = () => 1;
const ids = (items: readonly ModelItem[]) => items.map((i) => (i.type === 'message' ? String(i.content) : `${i.type}:${(i as { call_id: string }).call_id}`));

describe('truncation "auto"', () => {
  it('keeps everything that fits, and otherwise drops from the oldest', () => {
    const items = [user('a'), user('b'), user('c')];
    expect(truncateOldest(items, size, 3)).toBe(items);
    expect(ids(truncateOldest(items, size, 2))).toEqual(['b', 'c']);
  });

  it('never keeps an output whose call it dropped, parallel calls included', () => {
    const items = [user('a'), call('1'), call('2'), output('1'), output('2'), user('b')];
    expect(ids(truncateOldest(items, size, 4))).toEqual(['b']);
    expect(ids(truncateOldest([user('a'), call('1'), output('1'), user('b'), call('2'), output('2')], size, 4))).toEqual(['b', 'function_call:2', 'function_call_output:2']);
  });

  it('keeps the newest user message even when it alone does not fit', () => {
    expect(ids(truncateOldest([user('a'), user('b')], () => 10, 5))).toEqual(['b']);
  });

  it('is linear: 100x the items, one pass', () => {
    let calls = 0;
    const many = Array.from({ length: 10_000 }, (_, i) => user(String(i)));
    truncateOldest(many, () => (calls++, 1), 10);
    expect(calls).toBeLessThanOrEqual(2 * many.length);
  });
});
