import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import express from 'express';
import { hostileJsonShapeGuard } from './json-shape.scanner.js';
import { smallJsonBodyReader, type SmallBodyChecks } from './small-json-body.js';
import { toErrorEnvelope } from '#edge/errors/error-envelope.js';

interface Served {
  url: string;
  /** The keys express's parser built values for: empty when the reader parsed the body. */
  parsedByExpress: string[];
  /** Errors the app's error handler was handed. */
  errors: unknown[];
  close: () => Promise<void>;
}

/**
 * An app mounted as `configureGatewayApp` mounts it (scan, reader, express's
 * parser with `verify`, note), or without the reader: what express alone gives.
 */
async function serve(options: { reader: boolean; limit?: number; checks?: SmallBodyChecks }): Promise<Served> {
  const limit = options.limit ?? 1000;
  const guard = hostileJsonShapeGuard(3, (err, _req, res) => {
    res.statusCode = 400;
    res.end(JSON.stringify({ error: { message: err.message, param: err.param } }));
  });
  const parsedByExpress: string[] = [];
  const errors: unknown[] = [];
  const app = express();
  app.use(guard.scanWhileReading);
  if (options.reader) app.use(smallJsonBodyReader(options.checks ?? guard, { limit }));
  const reviver = (key: string, value: unknown) => {
    parsedByExpress.push(key);
    return value;
  };
  app.use(express.json({ limit, strict: false, verify: guard.verify, reviver }));
  app.use(guard.noteParsed);
  app.post('/', (req, res) => res.json({ body: req.body as unknown }));
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    errors.push(err);
    const { status, body } = toErrorEnvelope(err);
    res.status(status).json(body);
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    parsedByExpress,
    errors,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A POST of exactly these bytes and headers (no content-length given: sent chunked). */
function post(url: string, headers: http.OutgoingHttpHeaders, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const json =
  (type = 'application/json') =>
  (bytes: Buffer): http.OutgoingHttpHeaders => ({ 'content-type': type, 'content-length': bytes.length });
const bytes = (text: string) => Buffer.from(text, 'utf8');

/** Requests the reader takes (small, UTF-8 JSON, not compressed), as [name, headers, body]. */
const taken: Array<[string, (b: Buffer) => http.OutgoingHttpHeaders, Buffer]> = [
  ['an object', json(), bytes('{"model":"m","input":"hi","n":[1,2.5,null,true]}')],
  ['charset=utf-8', json('application/json; charset=utf-8'), bytes('{"a":"é"}')],
  ['a quoted, upper-case charset and odd spacing', json('Application/JSON ;charset="UTF-8"'), bytes('{"a":1}')],
  ['a leading BOM', json(), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes('{"a":"bom"}')])],
  ['invalid UTF-8 inside a string', json(), Buffer.concat([bytes('{"a":"'), Buffer.from([0xff, 0xfe, 0xc3]), bytes('"}')])],
  ['a scalar (strict is off)', json(), bytes('"just text"')],
  ['a syntax error', json(), bytes('{"a": tru')],
  ['blanks only', json(), bytes('   ')],
  ['a BOM only', json(), Buffer.from([0xef, 0xbb, 0xbf])],
  ['too many tools (the guard refuses)', json(), bytes('{"tools":[1,2,3,4]}')],
  ['too deep (the guard refuses)', json(), bytes(`${'['.repeat(200)}${']'.repeat(200)}`)],
];

/** Requests left to express's parser, and whether it parses them (rather than refusing or skipping). */
const leftToExpress: Array<[string, (b: Buffer) => http.OutgoingHttpHeaders, Buffer, boolean]> = [
  ['another charset (express refuses it)', json('application/json; charset=latin1'), bytes('{"a":1}'), false],
  ['utf-16, which express reads', json('application/json; charset=utf-16'), Buffer.from('\ufeff{"a":16}', 'utf16le'), true],
  ['gzip', (b) => ({ 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': b.length }), gzipSync(bytes('{"a":"zipped"}')), true],
  ['chunked', () => ({ 'content-type': 'application/json', 'transfer-encoding': 'chunked' }), bytes('{"a":"chunked"}'), true],
  ['over the limit', json(), bytes(`{"a":"${'x'.repeat(2000)}"}`), false],
  ['another media type', json('text/plain'), bytes('{"a":1}'), false],
];

describe('smallJsonBodyReader', () => {
  let withReader: Served;
  let expressAlone: Served;

  beforeAll(async () => {
    withReader = await serve({ reader: true });
    expressAlone = await serve({ reader: false });
  });

  afterAll(async () => {
    await withReader.close();
    await expressAlone.close();
  });

  beforeEach(() => {
    withReader.parsedByExpress.length = 0;
    withReader.errors.length = 0;
  });

  it.each(taken)('reads %s itself, with the answer express alone gives', async (_name, headers, body) => {
    const mine = await post(withReader.url, headers(body), body);
    const theirs = await post(expressAlone.url, headers(body), body);
    expect(mine).toEqual(theirs);
    expect(withReader.parsedByExpress).toEqual([]);
  });

  it.each(leftToExpress)('leaves %s to express, with the same answer', async (_name, headers, body, parses) => {
    const mine = await post(withReader.url, headers(body), body);
    const theirs = await post(expressAlone.url, headers(body), body);
    expect(mine).toEqual(theirs);
    expect(withReader.parsedByExpress.length > 0).toBe(parses);
  });

  it('answers a syntax error as invalid_json, with the error body-parser would pass', async () => {
    const answer = await post(withReader.url, json()(bytes('{"a":')), bytes('{"a":'));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'invalid_json' } });
    expect(withReader.errors).toEqual([expect.objectContaining({ type: 'entity.parse.failed', status: 400, body: '{"a":' })]);
  });

  it('passes a body the client cut short on as request.aborted, and keeps serving', async () => {
    await new Promise<void>((resolve, reject) => {
      const req = http.request(withReader.url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': 100 }, agent: false });
      req.on('error', () => resolve());
      req.write('{"a":"only part');
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 50);
      req.on('response', () => reject(new Error('answered a body that never arrived')));
    });
    while (withReader.errors.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(withReader.errors).toEqual([expect.objectContaining({ type: 'request.aborted', status: 400, received: 15 })]);
    const next = await post(withReader.url, json()(bytes('{"a":2}')), bytes('{"a":2}'));
    expect(next).toEqual({ status: 200, text: '{"body":{"a":2}}' });
  });

  it('leaves a body larger than the shape guard scans whole (64 KiB) to express, within the limit', async () => {
    const large = await serve({ reader: true, limit: 1024 * 1024 });
    try {
      const text = 'x'.repeat(70 * 1024);
      const body = bytes(JSON.stringify({ a: text }));
      expect(await post(large.url, json()(body), body)).toEqual({ status: 200, text: JSON.stringify({ body: { a: text } }) });
      expect(large.parsedByExpress).not.toEqual([]);
    } finally {
      await large.close();
    }
  });

  it('does not decode or parse the span verify blanked: its brackets stay, its inside is left out', async () => {
    const text = '{"tools":[1,2,3],"after":true}';
    const start = text.indexOf('[');
    const end = text.indexOf(']') + 1;
    const verified: Buffer[] = [];
    const server = await serve({
      reader: true,
      checks: { verify: (_req, _res, body) => void verified.push(body), blankedSpan: () => ({ start, end }) },
    });
    try {
      const answer = await post(server.url, json()(bytes(text)), bytes(text));
      expect(JSON.parse(answer.text)).toEqual({ body: { tools: [], after: true } });
      expect(verified.map((b) => b.toString('utf8'))).toEqual([text]);
    } finally {
      await server.close();
    }
  });
});
