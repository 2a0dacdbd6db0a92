import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { McpToolListCache } from './mcp-tool-list.cache.js';

const tools = (...names: string[]): Tool[] => names.map((name) => ({ name, inputSchema: { type: 'object' } }));

describe('McpToolListCache', () => {
  const connection = {};

  it('answers within the TTL and not after it', () => {
    const cache = new McpToolListCache(1_000);
    cache.set(connection, 'null', tools('a'), cache.generation(connection), undefined, 10_000);
    expect(cache.get(connection, 'null', 10_999)?.map((t) => t.name)).toEqual(['a']);
    expect(cache.get(connection, 'null', 11_000)).toBeUndefined();
    // Expired entries are gone, not revived by an earlier clock.
    expect(cache.get(connection, 'null', 10_500)).toBeUndefined();
  });

  it('keeps connections and filters apart', () => {
    const cache = new McpToolListCache(1_000);
    const other = {};
    cache.set(connection, 'null', tools('a', 'b'), cache.generation(connection), undefined, 0);
    expect(cache.get(other, 'null', 1)).toBeUndefined();
    expect(cache.get(connection, '["a"]', 1)).toBeUndefined();
  });

  it("drops a connection's listings on invalidate, and does not store a listing that was in flight across it", () => {
    const cache = new McpToolListCache(1_000);
    cache.set(connection, 'null', tools('a'), cache.generation(connection), undefined, 0);
    const started = cache.generation(connection);
    cache.invalidate(connection);
    expect(cache.get(connection, 'null', 1)).toBeUndefined();
    cache.set(connection, 'null', tools('stale'), started, undefined, 2);
    expect(cache.get(connection, 'null', 3)).toBeUndefined();
    cache.set(connection, 'null', tools('fresh'), cache.generation(connection), undefined, 4);
    expect(cache.get(connection, 'null', 5)?.map((t) => t.name)).toEqual(['fresh']);
  });

  it('stores nothing when off and nothing would announce a change', () => {
    const cache = new McpToolListCache(0);
    expect(cache.keeps(connection)).toBeUndefined();
    cache.set(connection, 'null', tools('a'), cache.generation(connection), undefined, 0);
    expect(cache.get(connection, 'null', 0)).toBeUndefined();
  });

  it('keeps a listing made under a notification epoch for as long as that epoch lasts, whatever the clock', () => {
    let epoch: number | undefined = 3;
    const cache = new McpToolListCache(0, () => epoch);
    expect(cache.keeps(connection)).toEqual({ watch: 3 });
    cache.set(connection, 'null', tools('a'), cache.generation(connection), 3, 0);
    expect(cache.get(connection, 'null', 10 * 86_400_000)?.map((t) => t.name)).toEqual(['a']);
    // The stream ended (epoch bumped), or is closed now: listed again.
    epoch = 4;
    expect(cache.get(connection, 'null', 1)).toBeUndefined();
    epoch = undefined;
    expect(cache.keeps(connection)).toBeUndefined();
  });

  it('does not keep a listing whose epoch ended while it was in flight', () => {
    let epoch: number | undefined = 1;
    const cache = new McpToolListCache(0, () => epoch);
    const { watch } = cache.keeps(connection)!;
    epoch = 2;
    cache.set(connection, 'null', tools('a'), cache.generation(connection), watch, 0);
    expect(cache.get(connection, 'null', 1)).toBeUndefined();
  });
});
