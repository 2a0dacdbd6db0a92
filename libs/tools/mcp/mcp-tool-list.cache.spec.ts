import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { McpToolListCache } from './mcp-tool-list.cache.js';

const tools = (...names: string[]): Tool[] => names.map((name) => ({ name, inputSchema: { type: 'object' } }));

describe('McpToolListCache', () => {
  const connection = {};

  it('answers within the TTL and not after it', () => {
    const cache = new McpToolListCache(1_000);
    cache.set(connection, 'null', tools('a'), cache.generation(connection), 10_000);
    expect(cache.get(connection, 'null', 10_999)?.map((t) => t.name)).toEqual(['a']);
    expect(cache.get(connection, 'null', 11_000)).toBeUndefined();
    // Expired entries are gone, not revived by an earlier clock.
    expect(cache.get(connection, 'null', 10_500)).toBeUndefined();
  });

  it('keeps connections and filters apart', () => {
    const cache = new McpToolListCache(1_000);
    const other = {};
    cache.set(connection, 'null', tools('a', 'b'), cache.generation(connection), 0);
    expect(cache.get(other, 'null', 1)).toBeUndefined();
    expect(cache.get(connection, '["a"]', 1)).toBeUndefined();
  });

  it("drops a connection's listings on invalidate, and does not store a listing that was in flight across it", () => {
    const cache = new McpToolListCache(1_000);
    cache.set(connection, 'null', tools('a'), cache.generation(connection), 0);
    const started = cache.generation(connection);
    cache.invalidate(connection);
    expect(cache.get(connection, 'null', 1)).toBeUndefined();
    cache.set(connection, 'null', tools('stale'), started, 2);
    expect(cache.get(connection, 'null', 3)).toBeUndefined();
    cache.set(connection, 'null', tools('fresh'), cache.generation(connection), 4);
    expect(cache.get(connection, 'null', 5)?.map((t) => t.name)).toEqual(['fresh']);
  });

  it('stores nothing when off', () => {
    const cache = new McpToolListCache(0);
    expect(cache.enabled).toBe(false);
    cache.set(connection, 'null', tools('a'), cache.generation(connection), 0);
    expect(cache.get(connection, 'null', 0)).toBeUndefined();
  });
});
