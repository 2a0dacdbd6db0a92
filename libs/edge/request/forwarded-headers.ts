import type { IncomingHttpHeaders } from 'node:http';

/**
 * The inbound headers the operator named in `upstream.forwardHeaders`, with
 * lower-cased names; a repeated header is joined the way HTTP allows.
 * Everything else stays at the edge: inbound headers carry the caller's
 * credentials, which the upstream has no business seeing.
 */
export function forwardedHeaders(headers: IncomingHttpHeaders, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const key = name.toLowerCase();
    const value = headers[key];
    if (value === undefined) continue;
    out[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
