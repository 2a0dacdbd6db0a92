import type { AddressInfo } from 'node:net';
import http from 'node:http';
import express from 'express';
import { hostileJsonShapeGuard, type KnownArray } from './json-shape.scanner.js';
import { contentDigest } from '#core/protocol/json-source.js';
import { SCANNED_BODY, scannedBodyOf } from '#tool-sdk/routes/scanned-body.js';
import { freezeJson } from '#tool-sdk/helpers/frozen-json.js';
import { toErrorEnvelope } from '#edge/errors/error-envelope.js';

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
  /** Runs between the scan and the parser: what the scan left on the request. */
  beforeParser?: (req: express.Request) => void,
  /** The guard's hash of a `tools` array's bytes. */
  digest: (bytes: Uint8Array) => string = contentDigest,
): Promise<{ url: string; close: () => Promise<void> }> {
  const guard = hostileJsonShapeGuard(
    3,
    (err, _req, res) => {
      res.statusCode = 400;
      res.end(JSON.stringify({ error: { message: err.message, param: err.param } }));
    },
    keptTools && { list: keptTools, recent: () => recentTools },
    digest,
  );
  const app = express();
  app.use(guard.scanWhileReading);
  if (beforeParser)
    app.use((req, _res, next) => {
      beforeParser(req);
      next();
    });
  const reviver = (key: string, value: unknown) => {
    parsedKeys.push(key);
    return value;
  };
  app.use(express.json({ limit: '1mb', verify: guard.verify, reviver }));
  app.use(guard.noteParsed);
  app.post('/', (req, res) => res.json(onParsed(req)));
  // The gateway's own answer to what the parser passes on (a refusal `verify` threw among it).
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const { status, body } = toErrorEnvelope(err);
    res.status(status).json(body);
  });
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

  /** The guard's own `data` listeners before the parser adds its one, per request. */
  const listenersSeen: number[] = [];
  const countListeners = (req: express.Request) => listenersSeen.push(req.listenerCount('data'));
  const serveCounting = (onParsed: (req: express.Request) => unknown = () => ({ reached: true })) => serve(onParsed, undefined, [], [], countListeners);
  const postJson = (url: string, body: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  /** A POST whose body goes out chunked (no content-length), as one chunk. */
  const postChunked = (url: string, body: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  beforeEach(() => (listenersSeen.length = 0));

  it('refuses a body announced large past its limits while it arrives, listening to its chunks', async () => {
    const server = await serveCounting();
    try {
      const answer = await postJson(server.url, JSON.stringify({ tools: [1, 2, 3, 4], input: 'x'.repeat(200_000) }));
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { error: { param: string } }).error.param).toBe('tools');
      expect(listenersSeen).toEqual([1]);
    } finally {
      await server.close();
    }
  });

  it('scans a small announced body whole once it is read: no listener of its own, the same refusal', async () => {
    const server = await serveCounting((req) => ({ tools: (req.body as { tools: unknown[] }).tools.length }));
    try {
      const refused = await postJson(server.url, JSON.stringify({ tools: [1, 2, 3, 4] }));
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: { param: string } }).error.param).toBe('tools');
      const deep = await postJson(server.url, '{"a":'.repeat(300) + '1' + '}'.repeat(300));
      expect(deep.status).toBe(400);
      const accepted = await postJson(server.url, JSON.stringify({ tools: [1, 2, 3], input: 'y'.repeat(60_000) }));
      expect(await accepted.json()).toEqual({ tools: 3 });
      expect(listenersSeen).toEqual([0, 0, 0]);
    } finally {
      await server.close();
    }
  });

  it('listens to the chunks of a body sent without a length, however small', async () => {
    const server = await serveCounting();
    try {
      const answer = await postChunked(server.url, JSON.stringify({ tools: [1, 2, 3, 4] }));
      expect(answer.status).toBe(400);
      expect((JSON.parse(answer.body) as { error: { param: string } }).error.param).toBe('tools');
      expect(listenersSeen).toEqual([1]);
    } finally {
      await server.close();
    }
  });

  it("leaves on the request what a body's bytes showed, for that body only, its tools' bytes hashed once", async () => {
    const hashed: string[] = [];
    const digest = (bytes: Uint8Array) => {
      hashed.push(Buffer.from(bytes).toString('utf8'));
      return contentDigest(bytes);
    };
    const server = await serve(
      (req) => {
        const scanned = scannedBodyOf(req);
        const tools = scanned?.tools;
        return {
          about: scanned?.body === req.body,
          storable: scanned?.storableText ?? null,
          toolsBytes: tools ? Buffer.from(tools.bytes).toString('utf8') : null,
          toolsDigest: tools ? tools.digest : null,
          toolsValue: tools ? tools.value === (req.body as { tools: unknown }).tools : null,
        };
      },
      undefined,
      [],
      [],
      undefined,
      digest,
    );
    try {
      const tools = '[{"type":"function","name":"a"}]';
      // Small, announced, and large, read as it arrives: the same facts, the list hashed once per request.
      for (const body of [`{"input":"hi","tools":${tools}}`, JSON.stringify({ input: 'x'.repeat(200_000), tools: JSON.parse(tools) as unknown })]) {
        hashed.length = 0;
        const answer = await postJson(server.url, body);
        expect(await answer.json()).toEqual({ about: true, storable: true, toolsBytes: tools, toolsDigest: contentDigest(tools), toolsValue: true });
        expect(hashed).toEqual([tools]);
      }
      hashed.length = 0;
      const chunked = await postChunked(server.url, `{"tools":${tools}}`);
      expect(JSON.parse(chunked.body)).toMatchObject({ about: true, storable: true, toolsBytes: tools });
      expect(hashed).toEqual([tools]);
      // An escape that could make NUL: the bytes do not vouch for the text, the walk decides.
      const risky = await postJson(server.url, '{"input":"\\u0000"}');
      expect(await risky.json()).toEqual({ about: true, storable: false, toolsBytes: null, toolsDigest: null, toolsValue: null });
    } finally {
      await server.close();
    }
  });

  it('says nothing of a body replaced after it was read', () => {
    const body = { input: 'read' };
    const req = { body, [SCANNED_BODY]: { body, storableText: true } };
    expect(scannedBodyOf(req)?.storableText).toBe(true);
    req.body = { input: 'replaced by a later middleware' };
    expect(scannedBodyOf(req)).toBeUndefined();
  });

  describe('with kept tool lists', () => {
    const declarations = [
      { type: 'function', name: 'a', parameters: { type: 'object' } },
      { type: 'function', name: 'b' },
    ];
    const toolsJson = JSON.stringify(declarations);
    const kept = freezeJson(structuredClone(declarations));
    const post = (url: string, body: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    /** What the handler sees: whether `tools` is the kept list itself, and the bytes the request says it was read from. */
    const seen = (req: express.Request) => {
      const body = req.body as { tools: unknown[]; input?: unknown };
      const source = scannedBodyOf(req)!.tools!;
      expect(source.value).toBe(body.tools);
      return { isKept: body.tools === kept, tools: body.tools, input: body.input ?? null, source: Buffer.from(source.bytes).toString('utf8') };
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
          sourceBytes = scannedBodyOf(req)?.tools?.bytes;
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

    it("blanks a kept list's bytes for a parser that reads the whole body, and leaves them to a reader that cuts their span out", () => {
      const guard = hostileJsonShapeGuard(3, () => undefined, { list: (_req, digest) => (digest === contentDigest(toolsJson) ? kept : undefined), recent: () => [] });
      const text = `{"input":"hi","tools":${toolsJson},"after":true}`;
      for (const blank of [true, false]) {
        const body = Buffer.from(text);
        const req = {} as http.IncomingMessage;
        guard.verify(req, undefined, body, 'utf-8', blank);
        const span = guard.blankedSpan(req)!;
        expect(span).toEqual({ start: text.indexOf('['), end: text.indexOf('[') + toolsJson.length });
        expect(body.toString('utf8')).toBe(blank ? text.replace(toolsJson, `[${' '.repeat(toolsJson.length - 2)}]`) : text);
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
