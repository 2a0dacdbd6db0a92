import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { RedisServeLock, redisConnectionName } from './redis-serve-lock.js';

describe('RedisServeLock', () => {
  it('a Redis that hangs up at boot fails the acquire and leaves no client reconnecting to it', async () => {
    // A real listener that closes every connection at once: ioredis sees "Connection is closed".
    let connections = 0;
    const server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      await expect(RedisServeLock.acquire(`redis://127.0.0.1:${port}`, 'p.responses.create')).rejects.toThrow();
      const atFailure = connections;
      expect(atFailure).toBeGreaterThanOrEqual(1);
      // ioredis's default retry comes back after 50 ms, then 100 ms, ...: a client left behind would have been back by now.
      await sleep(1000);
      expect(connections).toBe(atFailure);
    } finally {
      server.close();
    }
  });

  it('names connections after their role and pattern, in the characters Redis accepts in a name', () => {
    expect(redisConnectionName('lease', 't-1.responses.create')).toBe('switchyard:lease:t-1.responses.create');
    expect(redisConnectionName('rpc', 'my gateway\n.responses.create')).toBe('switchyard:rpc:my_gateway_.responses.create');
  });
});
