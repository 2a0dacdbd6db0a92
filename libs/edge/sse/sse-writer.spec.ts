import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { SseWriter } from './sse-writer.js';

interface Exchange {
  status: number;
  type: string | undefined;
  /** The body as a client reads it (chunked framing removed). */
  body: string;
  /** Each HTTP chunk's data, in order (none when the answer was not chunked). */
  chunks: string[];
  /** What the writer handed to `res.write`, call by call. */
  writes: string[];
}

/** Reads a raw HTTP answer: the head, then the body chunk by chunk, or up to the socket's end when not chunked. */
function parseAnswer(raw: string): Omit<Exchange, 'writes'> {
  const headEnd = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, headEnd).split('\r\n');
  const headers = new Map(head.slice(1).map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  const status = Number(head[0].split(' ')[1]);
  let rest = raw.slice(headEnd + 4);
  if (headers.get('transfer-encoding') !== 'chunked') return { status, type: headers.get('content-type'), body: rest, chunks: [] };
  const chunks: string[] = [];
  for (;;) {
    const sizeEnd = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, sizeEnd), 16);
    if (size === 0) break;
    const data = Buffer.from(rest.slice(sizeEnd + 2))
      .subarray(0, size)
      .toString();
    chunks.push(data);
    rest = rest.slice(sizeEnd + 2 + data.length);
    expect(rest.startsWith('\r\n')).toBe(true);
    rest = rest.slice(2);
  }
  return { status, type: headers.get('content-type'), body: chunks.join(''), chunks };
}

/** A real response on a real socket, asked for over HTTP/1.1 or 1.0; `res.write` is counted, not replaced. */
async function withWriter(
  script: (sse: SseWriter, res: http.ServerResponse) => void | Promise<void>,
  mode: 'event' | 'tick' = 'event',
  version: '1.1' | '1.0' = '1.1',
): Promise<Exchange> {
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
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1', () => socket.write(`GET / HTTP/${version}\r\nHost: test\r\n\r\n`));
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (data: string) => {
        received += data;
        // A kept-alive chunked answer ends with its last chunk; any other ends with the socket.
        if (received.endsWith('\r\n0\r\n\r\n') || received.endsWith('\r\n\r\n0\r\n\r\n')) socket.end();
      });
      socket.on('end', () => resolve(received));
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
    });
    return { ...parseAnswer(raw), writes };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const framed = (data: string) => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;

describe('SseWriter', () => {
  it('sends each event as exactly one HTTP chunk, and the events of one tick in one write', async () => {
    const { status, type, body, chunks, writes } = await withWriter((sse) => {
      sse.event('a', { n: 1 });
      sse.event('b', { n: 2 });
      sse.event('c', { n: 3 });
      setImmediate(() => {
        sse.event('d', { n: 'é' });
        setImmediate(() => sse.end());
      });
    });
    expect(status).toBe(200);
    expect(type).toBe('text/event-stream; charset=utf-8');
    const events = ['event: a\ndata: {"n":1}\n\n', 'event: b\ndata: {"n":2}\n\n', 'event: c\ndata: {"n":3}\n\n', 'event: d\ndata: {"n":"é"}\n\n'];
    expect(chunks).toEqual(events);
    expect(body).toBe(events.join(''));
    // One write per tick, each event framed as its own chunk (the size counts bytes, not characters).
    expect(writes).toEqual([events.slice(0, 3).map(framed).join(''), framed(events[3])]);
  });

  it('end() flushes events written in the same tick, with the last chunk', async () => {
    const { body, chunks, writes } = await withWriter((sse) => {
      sse.event('a', { n: 1 });
      sse.event('b', { n: 2 });
      sse.end();
    });
    expect(writes).toHaveLength(0);
    expect(chunks).toEqual(['event: a\ndata: {"n":1}\n\n', 'event: b\ndata: {"n":2}\n\n']);
    expect(body).toBe('event: a\ndata: {"n":1}\n\nevent: b\ndata: {"n":2}\n\n');
  });

  it('to a client Node does not chunk for (HTTP/1.0), writes each event once on a socket corked until the end of the tick', async () => {
    const corkedDuringTick: number[] = [];
    const { body, chunks, writes } = await withWriter(
      (sse, res) => {
        sse.event('a', { n: 1 });
        sse.event('b', { n: 2 });
        corkedDuringTick.push(res.writableCorked);
        setImmediate(() => {
          corkedDuringTick.push(res.writableCorked);
          sse.event('c', { n: 3 });
          setImmediate(() => sse.end());
        });
      },
      'event',
      '1.0',
    );
    expect(chunks).toEqual([]);
    expect(writes).toEqual(['event: a\ndata: {"n":1}\n\n', 'event: b\ndata: {"n":2}\n\n', 'event: c\ndata: {"n":3}\n\n']);
    expect(corkedDuringTick).toEqual([1, 0]);
    expect(body).toBe(writes.join(''));
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
