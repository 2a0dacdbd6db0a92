import type { IncomingMessage, ServerResponse } from 'node:http';
import { announcedSmall, readsAsJson } from './json-shape.scanner.js';

/** What the reader needs of the shape guard (json-shape.scanner.ts). */
export interface SmallBodyChecks {
  /** The guard's check of the whole body; throws the error to answer with. `blank: false`: a kept tool list's bytes are left in `body`. */
  verify: (req: IncomingMessage, res: unknown, body: Buffer, encoding: string, blank?: boolean) => void;
  /** The span of a kept tool list `verify` found (brackets included), left out of the text parsed. */
  blankedSpan: (req: IncomingMessage) => { start: number; end: number } | undefined;
}

/** `application/json`, bare or with `charset=utf-8`: the one form this reader takes (case and spaces aside). */
const PLAIN_JSON = /^application\/json\s*(?:;\s*charset\s*=\s*(?:utf-8|"utf-8")\s*)?$/i;

/** The UTF-8 byte order mark, which the JSON parser this stands in for drops. */
const BOM = [0xef, 0xbb, 0xbf];

/**
 * Reads the common request body itself, ahead of express's JSON parser: UTF-8
 * JSON, not compressed, announced small enough for the shape guard to scan
 * whole (`announcedSmall`) and within `limit`. The body is read into one buffer, checked by the shape guard's
 * `verify`, and parsed from its text with the span of a kept tool list left
 * out, so those bytes are neither decoded nor walked by `JSON.parse` (the
 * parser would read 30 KB of blanks for a 100-tool list). Anything else (a
 * compressed, chunked, larger or other-charset body) is left to express's
 * parser, which then finds the request finished or untouched.
 *
 * What the request then holds is what `express.json({ strict: false, verify })`
 * gives: the parsed value in `req.body` (`{}` for an empty text), a leading
 * BOM dropped, invalid UTF-8 replaced; a `verify` error passed on as it was
 * thrown; a syntax error as body-parser's `entity.parse.failed` (400); a body
 * cut short by the client as `request.aborted` (400).
 *
 * Why not body-parser alone: for a plain request it takes the content type
 * apart, decodes through iconv-lite, and runs raw-body's stream machinery;
 * together about 2 % of a plain request's CPU, more with a kept tool list.
 */
export function smallJsonBodyReader(checks: SmallBodyChecks, options: { limit: number }) {
  return function readSmallJsonBody(req: IncomingMessage & { body?: unknown }, res: ServerResponse, next: (err?: unknown) => void): void {
    const length = plainJsonLength(req, options);
    if (length === null) return next();
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    };
    const onEnd = () => {
      stop();
      // Node's parser holds a body to its content-length; a shorter one ends in `aborted`, not here.
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
      try {
        // Not blanked: `textOf` leaves the kept list's span out of the text anyway.
        checks.verify(req, res, body, 'utf-8', false);
      } catch (err) {
        return next(err);
      }
      try {
        req.body = parseJsonText(textOf(body, checks.blankedSpan(req)));
      } catch (err) {
        return next(parseFailure(err, body));
      }
      next();
    };
    const onAborted = () => {
      stop();
      next(
        Object.assign(new Error('request aborted'), {
          type: 'request.aborted',
          status: 400,
          statusCode: 400,
          expose: true,
          code: 'ECONNABORTED',
          expected: length,
          length,
          received,
        }),
      );
    };
    const onError = (err: unknown) => {
      stop();
      next(err);
    };
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', onError);
  };
}

/**
 * The announced length of a body this reader takes, else null: what the
 * shape guard reads as JSON and scans whole, in UTF-8, within the limit, and
 * not read yet.
 */
function plainJsonLength(req: IncomingMessage & { body?: unknown }, options: { limit: number }): number | null {
  if (req.body !== undefined || !readsAsJson(req) || !announcedSmall(req) || !PLAIN_JSON.test(req.headers['content-type']!)) return null;
  const length = Number(req.headers['content-length']);
  return length <= options.limit ? length : null;
}

/** The body's text without a leading BOM and with the blanked span's inside cut out (its brackets stay). */
function textOf(body: Buffer, blanked: { start: number; end: number } | undefined): string {
  const from = body[0] === BOM[0] && body[1] === BOM[1] && body[2] === BOM[2] ? 3 : 0;
  if (!blanked || blanked.start < from) return body.toString('utf8', from);
  return body.toString('utf8', from, blanked.start + 1) + body.toString('utf8', blanked.end - 1);
}

/** `JSON.parse`, with body-parser's answer for an empty text. */
function parseJsonText(text: string): unknown {
  return text.length === 0 ? {} : JSON.parse(text);
}

/** A syntax error as body-parser reports it, which the error envelope answers as `invalid_json`. */
function parseFailure(err: unknown, body: Buffer): Error {
  const error = err instanceof Error ? err : new SyntaxError(String(err));
  return Object.assign(error, { type: 'entity.parse.failed', status: 400, statusCode: 400, expose: true, body: body.toString('utf8') });
}
