/**
 * Headers a caller may not set on an upstream call: the transport's own
 * framing and connection management (a caller-chosen `content-length` or
 * `transfer-encoding` would corrupt the request). `accept` and
 * `content-type` are always the transport's, and `authorization` is when
 * `upstream.apiKey` is set: those win over a caller's.
 */
export const RESERVED_UPSTREAM_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'proxy-connection',
]);

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
// Visible ASCII, space, tab and obs-text; no CR or LF.
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Why a header cannot be sent upstream, or null when it can (name lower-cased). */
export function upstreamHeaderProblem(name: string, value: unknown): string | null {
  if (!TOKEN.test(name)) return `'${name}' is not a valid header name.`;
  if (RESERVED_UPSTREAM_HEADERS.has(name)) return `'${name}' is set by the gateway itself and cannot be passed to the upstream.`;
  if (typeof value !== 'string') return `Upstream header '${name}' must be a string.`;
  if (!FIELD_VALUE.test(value)) return `Upstream header '${name}' contains characters a header value cannot carry.`;
  return null;
}
