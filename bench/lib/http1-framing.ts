/**
 * Where one HTTP/1.1 message ends in a buffer: the little framing the lean
 * benchmark harness (`replay-upstream.ts`, `socket-load.ts`) needs to speak
 * keep-alive HTTP over raw sockets without `node:http`'s parser, whose own
 * CPU would otherwise sit on the same two cores as the gateway it measures.
 * Only what our own peers send: `content-length` or `chunked` bodies, no
 * trailers, no bodies framed by closing the connection.
 */
export interface Http1Message {
  /** The start line and headers, without the blank line. */
  head: string;
  /** First byte of the body. */
  bodyStart: number;
  /** First byte after the message (the next message's start on a keep-alive connection). */
  end: number;
  /** The body is chunk-framed: `body()` removes the framing. */
  chunked: boolean;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const LINE_END = Buffer.from('\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;
const CHUNKED = /\r\ntransfer-encoding:[ \t]*chunked/i;

/** The message starting at `from`, or undefined while it is incomplete. Throws on framing it does not support. */
export function messageAt(buf: Buffer, from: number, isResponse: boolean): Http1Message | undefined {
  const headEnd = buf.indexOf(HEAD_END, from);
  if (headEnd === -1) return undefined;
  const head = buf.toString('latin1', from, headEnd);
  const bodyStart = headEnd + 4;
  if (CHUNKED.test(head)) {
    const end = chunkedEnd(buf, bodyStart);
    return end === undefined ? undefined : { head, bodyStart, end, chunked: true };
  }
  const length = CONTENT_LENGTH.exec(head);
  if (length) {
    const end = bodyStart + Number(length[1]);
    return end > buf.length ? undefined : { head, bodyStart, end, chunked: false };
  }
  const status = isResponse ? statusOf(head) : 0;
  if (!isResponse || status === 204 || status === 304 || (status >= 100 && status < 200)) return { head, bodyStart, end: bodyStart, chunked: false };
  throw new Error(`a response without content-length or chunked framing: ${head.split('\r\n')[0]}`);
}

/** The body of a complete message, chunk framing removed. */
export function bodyOf(buf: Buffer, message: Http1Message): Buffer {
  if (!message.chunked) return buf.subarray(message.bodyStart, message.end);
  const parts: Buffer[] = [];
  for (let pos = message.bodyStart; ;) {
    const lineEnd = buf.indexOf(LINE_END, pos);
    const size = parseInt(buf.toString('latin1', pos, lineEnd), 16);
    if (size === 0) return Buffer.concat(parts);
    parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
    pos = lineEnd + 2 + size + 2;
  }
}

function chunkedEnd(buf: Buffer, from: number): number | undefined {
  for (let pos = from; ;) {
    const lineEnd = buf.indexOf(LINE_END, pos);
    if (lineEnd === -1) return undefined;
    // A chunk-size line may carry extensions after ';'; parseInt stops there.
    const size = parseInt(buf.toString('latin1', pos, lineEnd), 16);
    if (Number.isNaN(size)) throw new Error(`bad chunk size line: ${buf.toString('latin1', pos, Math.min(lineEnd, pos + 40))}`);
    if (size === 0) return lineEnd + 4 <= buf.length ? lineEnd + 4 : undefined;
    pos = lineEnd + 2 + size + 2;
    if (pos > buf.length) return undefined;
  }
}

/** `METHOD /path` of a request's head. */
export function requestLine(head: string): { method: string; path: string } {
  const firstSpace = head.indexOf(' ');
  const secondSpace = head.indexOf(' ', firstSpace + 1);
  return { method: head.slice(0, firstSpace), path: head.slice(firstSpace + 1, secondSpace) };
}

/** The status code of a response's head. */
export function statusOf(head: string): number {
  return Number(head.slice(9, 12));
}
