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

/** Refuses `value` (a body, a query, a field) when any string in it is not storable text; `prefix` names where it sits. */
export function assertStorableText(value: unknown, prefix = ''): void {
  const path = unstorableTextPath(value, prefix);
  if (path !== null) throw unstorableTextError(path || prefix || null);
}
