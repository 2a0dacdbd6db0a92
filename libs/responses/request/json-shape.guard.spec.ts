import type { AddressInfo } from 'node:net';
import http from 'node:http';
import express from 'express';
import { hostileJsonShapeGuard } from './json-shape.scanner.js';

/**
 * The guard as the gateway mounts it (scan, express.json with `verify`, note),
 * over a real socket: what a handler sees of the request once its body was read.
 */
async function serve(onParsed: (req: express.Request) => unknown): Promise<{ url: string; close: () => Promise<void> }> {
  const guard = hostileJsonShapeGuard(3, (err, _req, res) => {
    res.statusCode = 400;
    res.end(JSON.stringify({ error: { message: err.message, param: err.param } }));
  });
  const app = express();
  app.use(guard.scanWhileReading);
  app.use(express.json({ limit: '1mb', verify: guard.verify }));
  app.use(guard.noteParsed);
  app.post('/', (req, res) => res.json(onParsed(req)));
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('hostileJsonShapeGuard over HTTP', () => {
  it('stops listening to a body it scanned once the body is read, so a long-running request holds no scanner', async () => {
    const server = await serve((req) => ({ dataListeners: req.listenerCount('data'), tools: (req.body as { tools: unknown[] }).tools.length }));
    try {
      const answer = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tools: [1, 2], input: 'x'.repeat(200_000) }),
      });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ dataListeners: 0, tools: 2 });
    } finally {
      await server.close();
    }
  });

  it('still refuses a body past its limits while it arrives', async () => {
    const server = await serve(() => ({ reached: true }));
    try {
      const answer = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tools: [1, 2, 3, 4] }) });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { error: { param: string } }).error.param).toBe('tools');
    } finally {
      await server.close();
    }
  });
});
