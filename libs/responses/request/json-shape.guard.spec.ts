import type { AddressInfo } from 'node:net';
import http from 'node:http';
import express from 'express';
import { hostileJsonShapeGuard, type KnownArray } from './json-shape.scanner.js';
import { contentDigest, jsonSourceOf } from '#core/protocol/json-source.js';
import { freezeJson } from '#core/protocol/frozen-json.js';

/**
 * The guard as the gateway mounts it (scan, express.json with `verify`, note),
 * over a real socket: what a handler sees of the request once its body was read.
 */
async function serve(
  onParsed: (req: express.Request) => unknown,
  keptTools?: (req: http.IncomingMessage, digest: string) => readonly object[] | undefined,
  /** Every key the JSON parser built a value for (its reviver), to see what it parsed. */
  parsedKeys: string[] = [],
  recentTools: readonly KnownArray[] = [],
): Promise<{ url: string; close: () => Promise<void> }> {
  const guard = hostileJsonShapeGuard(
    3,
    (err, _req, res) => {
      res.statusCode = 400;
      res.end(JSON.stringify({ error: { message: err.message, param: err.param } }));
    },
    keptTools && { list: keptTools, recent: () => recentTools },
  );
  const app = express();
  app.use(guard.scanWhileReading);
  const reviver = (key: string, value: unknown) => {
    parsedKeys.push(key);
    return value;
  };
  app.use(express.json({ limit: '1mb', verify: guard.verify, reviver }));
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

  describe('with kept tool lists', () => {
    const declarations = [
      { type: 'function', name: 'a', parameters: { type: 'object' } },
      { type: 'function', name: 'b' },
    ];
    const toolsJson = JSON.stringify(declarations);
    const kept = freezeJson(structuredClone(declarations));
    const post = (url: string, body: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    /** What the handler sees: whether `tools` is the kept list itself, and the bytes noted as its source. */
    const seen = (req: express.Request) => {
      const body = req.body as { tools: unknown[]; input?: unknown };
      return { isKept: body.tools === kept, tools: body.tools, input: body.input ?? null, source: Buffer.from(jsonSourceOf(body.tools)!.bytes).toString('utf8') };
    };

    it('hands a request the kept list for its bytes, noting the bytes as they were sent', async () => {
      const asked: string[] = [];
      const parsedKeys: string[] = [];
      const server = await serve(
        seen,
        (_req, digest) => {
          asked.push(digest);
          return digest === contentDigest(toolsJson) ? kept : undefined;
        },
        parsedKeys,
      );
      try {
        const answer = await post(server.url, `{"input":"hi","tools":${toolsJson},"after":true}`);
        expect(await answer.json()).toEqual({ isKept: true, tools: declarations, input: 'hi', source: toolsJson });
        expect(asked).toEqual([contentDigest(toolsJson)]);
        // The parser never read the declarations: their bytes were blanked before it ran.
        expect(parsedKeys).toEqual(['input', 'tools', 'after', '']);
        // Another list is parsed from its own bytes.
        const other = JSON.stringify([{ type: 'function', name: 'c' }]);
        expect(await (await post(server.url, `{"tools":${other}}`)).json()).toEqual({ isKept: false, tools: JSON.parse(other), input: null, source: other });
      } finally {
        await server.close();
      }
    });

    it("takes a recent list's digest and bytes for bytes equal to it, without hashing or copying them", async () => {
      // A digest no hash of these bytes gives: asked for, it shows the bytes were compared, not hashed.
      const recent = { bytes: Buffer.from(toolsJson), digest: 'kept-digest-of-a-b' };
      const asked: string[] = [];
      const parsedKeys: string[] = [];
      let sourceBytes: Uint8Array | undefined;
      const server = await serve(
        (req) => {
          sourceBytes = jsonSourceOf((req.body as { tools: unknown[] }).tools)?.bytes;
          return seen(req);
        },
        (_req, digest) => {
          asked.push(digest);
          return digest === recent.digest ? kept : undefined;
        },
        parsedKeys,
        [recent],
      );
      try {
        const answer = await post(server.url, `{"input":"hi","tools":${toolsJson},"after":true}`);
        expect(await answer.json()).toEqual({ isKept: true, tools: declarations, input: 'hi', source: toolsJson });
        expect(asked).toEqual(['kept-digest-of-a-b']);
        expect(sourceBytes).toBe(recent.bytes);
        expect(parsedKeys).toEqual(['input', 'tools', 'after', '']);
        // Bytes that differ from it are hashed and looked up as before, and parsed when not kept.
        const other = toolsJson.replace('"b"', '"c"');
        const second = await post(server.url, `{"tools":${other}}`);
        expect(await second.json()).toEqual({ isKept: false, tools: JSON.parse(other), input: null, source: other });
        expect(asked).toEqual(['kept-digest-of-a-b', contentDigest(other)]);
      } finally {
        await server.close();
      }
    });

    it('keeps JSON semantics: of a repeated `tools` key the last one counts, kept or not', async () => {
      const server = await serve(seen, (_req, digest) => (digest === contentDigest(toolsJson) ? kept : undefined));
      try {
        const lastKept = await post(server.url, `{"tools":[{"type":"function","name":"first"}],"input":"x","tools":${toolsJson}}`);
        expect(await lastKept.json()).toMatchObject({ isKept: true, tools: declarations, input: 'x' });
        const firstKept = await post(server.url, `{"tools":${toolsJson},"tools":[{"type":"function","name":"last"}]}`);
        expect(await firstKept.json()).toMatchObject({ isKept: false, tools: [{ type: 'function', name: 'last' }] });
      } finally {
        await server.close();
      }
    });
  });
});
