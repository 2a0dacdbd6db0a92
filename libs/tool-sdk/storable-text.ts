import { InvalidRequestError } from './errors.js';

/**
 * NUL, or a UTF-16 surrogate without its pair. JSON can carry both (`\u0000`,
 * `\ud800`), but they are not text any store keeps as sent: PostgreSQL refuses
 * NUL in `text` and `jsonb` and lone surrogates in `jsonb`, and SQLite's UTF-8
 * encoding turns a lone surrogate into U+FFFD. Refused where the request
 * arrives, on every store alike, before a model runs on text that could not
 * be saved afterwards.
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

const member = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/**
 * The path of the first string (value or object key) that is not storable
 * text, as a `param` (`input[0].content[0].text`, `metadata.k`), or null.
 * Iterative: a body's depth is bounded by the shape scan, not by this stack.
 */
export function unstorableTextPath(value: unknown, prefix = ''): string | null {
  const stack: Array<[unknown, string]> = [[value, prefix]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (!isStorableText(v)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i];
        if (!isStorableText(key)) return member(path, key.replace(UNSTORABLE_ALL, '\ufffd'));
        stack.push([child, member(path, key)]);
      }
    }
  }
  return null;
}

const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** The 400 for text that names its field; one code for the edge and the stores' last line of defence. */
export function unstorableTextError(param: string | null): InvalidRequestError {
  const where = param ? `Invalid value for '${param}'` : 'Invalid text';
  return new InvalidRequestError(`${where}: text must be valid Unicode without NUL (\\u0000) characters or unpaired surrogates (\\ud800-\\udfff).`, param, 'unsupported_unicode');
}

const BACKSLASH = 0x5c;
const LOWER_U = 0x75;

/** `\u0000`, or `\uD800`-`\uDFFF` (either case) at `i`: an escape that could make NUL or a surrogate. */
function riskyEscapeAt(bytes: Uint8Array, i: number): boolean {
  const a = bytes[i + 2] | 0x20;
  const b = bytes[i + 3] | 0x20;
  if (a === 0x64 /* d */) return (b >= 0x38 && b <= 0x39) || (b >= 0x61 && b <= 0x66); // 8, 9, a-f
  return a === 0x30 && b === 0x30 && bytes[i + 4] === 0x30 && bytes[i + 5] === 0x30;
}

/**
 * True when a UTF-8 JSON text cannot hold NUL or an unpaired surrogate in
 * any string: JSON forbids a raw NUL inside a string (and outside one it is
 * not JSON), and the UTF-8 decoder turns encoded surrogates into U+FFFD, so
 * both can only come from a `\u0000` or `\uD8xx`-`\uDFxx` escape. Every
 * `\u` in the bytes is looked at, an escaped backslash followed by `u`
 * included, so a false answer only means "walk the parsed value", never a
 * missed escape. One native search per `\u`: plain bodies cost one pass.
 */
export function utf8BytesAreStorable(bytes: Buffer): boolean {
  for (let i = bytes.indexOf(BACKSLASH); i >= 0; i = bytes.indexOf(BACKSLASH, i + 2)) {
    if (bytes[i + 1] === LOWER_U && riskyEscapeAt(bytes, i)) return false;
  }
  return true;
}

/** Refuses `value` (a body, a query, a field) when any string in it is not storable text; `prefix` names where it sits. */
export function assertStorableText(value: unknown, prefix = ''): void {
  const path = unstorableTextPath(value, prefix);
  if (path !== null) throw unstorableTextError(path || prefix || null);
}
