import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SseWriter } from './sse-writer.js';

/** A real response on a real socket; `res.write` is counted, not replaced. */
async function withWriter(script: (sse: SseWriter, res: http.ServerResponse) => void | Promise<void>, mode: 'event' | 'tick' = 'event') {
  const writes: string[] = [];
  const server = http.createServer((_req, res) => {
    const write = res.write.bind(res) as (chunk: string) => boolean;
    res.write = ((chunk: string) => {
      writes.push(String(chunk));
      return write(chunk);
    }) as typeof res.write;
    void script(new SseWriter(res, 60_000, mode), res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return { status: res.status, type: res.headers.get('content-type'), body: await res.text(), writes };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('SseWriter', () => {
  it('writes each event in exactly one write, corked until the end of the tick', async () => {
    const corkedDuringTick: number[] = [];
    const { status, type, body, writes } = await withWriter((sse, res) => {
      sse.event('a', { n: 1 });
      sse.event('b', { n: 2 });
      sse.event('c', { n: 3 });
      corkedDuringTick.push(res.writableCorked);
      setImmediate(() => {
        corkedDuringTick.push(res.writableCorked);
        sse.event('d', { n: 4 });
        setImmediate(() => sse.end());
      });
    });
    expect(status).toBe(200);
    expect(type).toBe('text/event-stream; charset=utf-8');
    expect(writes).toEqual(['event: a\ndata: {"n":1}\n\n', 'event: b\ndata: {"n":2}\n\n', 'event: c\ndata: {"n":3}\n\n', 'event: d\ndata: {"n":4}\n\n']);
    // Corked while the tick's events were written, flushed before the next tick.
    expect(corkedDuringTick).toEqual([1, 0]);
    expect(body).toBe(writes.join(''));
  });

  it('end() flushes events written in the same tick', async () => {
    const { body, writes } = await withWriter((sse) => {
      sse.event('a', { n: 1 });
      sse.event('b', { n: 2 });
      sse.end();
    });
    expect(writes).toHaveLength(2);
    expect(body).toBe('event: a\ndata: {"n":1}\n\nevent: b\ndata: {"n":2}\n\n');
  });

  it('in tick mode joins the events of one tick into one write', async () => {
    const { body, writes } = await withWriter((sse) => {
      sse.event('a', { n: 1 });
      sse.event('b', { n: 2 });
      setImmediate(() => {
        sse.event('c', { n: 3 });
        setImmediate(() => sse.end());
      });
    }, 'tick');
    expect(writes).toEqual(['event: a\ndata: {"n":1}\n\nevent: b\ndata: {"n":2}\n\n', 'event: c\ndata: {"n":3}\n\n']);
    expect(body).toBe(writes.join(''));
  });

  it('in tick mode end() sends what the tick still holds', async () => {
    const { body, writes } = await withWriter((sse) => {
      sse.event('a', { n: 1 });
      sse.end();
    }, 'tick');
    expect(writes).toHaveLength(0);
    expect(body).toBe('event: a\ndata: {"n":1}\n\n');
  });

  it('headersSent stays false until the first event, so an early error can still be plain HTTP', async () => {
    const seen: boolean[] = [];
    const { status, body } = await withWriter((sse, res) => {
      seen.push(sse.headersSent);
      res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":{}}');
    });
    expect(seen).toEqual([false]);
    expect(status).toBe(502);
    expect(body).toBe('{"error":{}}');
  });

  it('writes nothing once the response is gone', async () => {
    const { writes } = await withWriter((sse, res) => {
      sse.event('a', { n: 1 });
      res.destroy();
      sse.event('b', { n: 2 });
      sse.end();
    }).catch(() => ({ writes: [] as string[] }));
    expect(writes).toEqual([]);
  });
});
