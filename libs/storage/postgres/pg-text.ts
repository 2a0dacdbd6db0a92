import { isGatewayError } from '#tool-sdk/errors.js';
import { unstorableTextError } from '#tool-sdk/storable-text.js';
import { isUnavailable, sqlStateOf, translateUnavailable } from './pg-unavailable.js';

/**
 * `\u0000` and lone-surrogate escapes as `JSON.stringify` writes them, preceded by an even run of
 * backslashes (an odd run would make the escape literal text). The look-behind keeps a long run of
 * backslashes linear: a match can only start where the run starts.
 */
const UNSTORABLE_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/g;
const ANY_ESCAPE = /\\u(?:0000|d[89a-f])/;

/**
 * A JSON column value as PostgreSQL's `jsonb` accepts it. Text clients send is
 * checked at the edge (`TextIntegrityGuard`); what reaches here with NUL or a
 * lone surrogate came from a model or a tool, and losing a whole response over
 * one character would be worse than replacing it: both become U+FFFD, which is
 * what SQLite's UTF-8 encoding already does to a lone surrogate.
 * (`JSON.stringify` escapes both, and writes paired surrogates as they are.)
 */
export function pgJson(value: unknown): string {
  const json = JSON.stringify(value ?? null);
  return ANY_ESCAPE.test(json) ? json.replace(UNSTORABLE_ESCAPE, '$1\\ufffd') : json;
}

/**
 * The text errors PostgreSQL raises for values it cannot hold: NUL in a
 * `text` parameter (22021), `\u0000` in `jsonb` (22P05), a lone surrogate
 * escape in `jsonb` (22P02 with a Unicode detail).
 */
export function isUnstorableText(e: unknown): boolean {
  const code = sqlStateOf(e);
  if (code === '22021' || code === '22P05') return true;
  const { message, detail } = e as { message?: unknown; detail?: unknown };
  return code === '22P02' && /surrogate|unicode/i.test(`${String(message)} ${String(detail ?? '')}`);
}

/**
 * The one translation of PostgreSQL failures every store here applies: an
 * outage is the 503 `store_unavailable`, text it cannot hold a 400
 * `unsupported_unicode`, anything else is left as it is.
 */
export function translatePgError(e: unknown): unknown {
  if (isGatewayError(e)) return e;
  if (isUnavailable(e)) return translateUnavailable(e);
  if (isUnstorableText(e)) return Object.assign(unstorableTextError(null), { cause: e });
  return e;
}
