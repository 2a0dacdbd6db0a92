import { InvalidRequestError } from '#core/errors/gateway-error.js';
import { MAX_JSON_DEPTH } from './json-depth.js';
import { MAX_OBJECT_KEYS, type JsonShapeViolation } from './json-shape.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/**
 * The same limits as `jsonShapeViolation`, checked on the raw UTF-8 bytes
 * before they are parsed: one pass over the bytes, no objects built. A body
 * with 300,000 keys in one object costs the parser (and then any walk over
 * the object) seconds of event loop; here it is refused in milliseconds.
 * Multi-byte UTF-8 sequences never contain the ASCII bytes looked at, and
 * malformed JSON is left for the parser to report.
 */
export function scanJsonShape(bytes: Uint8Array, limits: { depth?: number; keys?: number; topLevelArrays?: Readonly<Record<string, number>> } = {}): JsonShapeViolation | null {
  const depthLimit = limits.depth ?? MAX_JSON_DEPTH;
  const keyLimit = limits.keys ?? MAX_OBJECT_KEYS;
  const arrayLimits = limits.topLevelArrays ?? {};
  const limitedFields = Object.keys(arrayLimits);
  /** The top-level array being counted against its limit, if any. */
  let counted: { field: string; limit: number } | null = null;
  let countedOpen = false;
  let pendingField: string | null = null;
  /** Per open container: 0 object, 1 array; its key (or comma) count; for objects, the current key's byte span. */
  const kinds: number[] = [];
  const counts: number[] = [];
  const keyStarts: number[] = [];
  const keyEnds: number[] = [];
  let stringStart = -1;
  let lastStringStart = -1;
  let lastStringEnd = -1;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (stringStart >= 0) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) {
        lastStringStart = stringStart;
        lastStringEnd = i + 1;
        stringStart = -1;
      }
      continue;
    }
    switch (c) {
      case QUOTE:
        stringStart = i;
        break;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (kinds.length >= depthLimit) return { kind: 'depth', limit: depthLimit };
        // `{"tools": [` at the top level: its elements are counted.
        if (kinds.length === 1) {
          countedOpen = c === OPEN_ARRAY && pendingField !== null;
          if (countedOpen) counted = { field: pendingField!, limit: arrayLimits[pendingField!] };
          pendingField = null;
        }
        kinds.push(c === OPEN_OBJECT ? 0 : 1);
        counts.push(0);
        keyStarts.push(-1);
        keyEnds.push(-1);
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        if (kinds.length === 2 && countedOpen) countedOpen = false;
        kinds.pop();
        counts.pop();
        keyStarts.pop();
        keyEnds.pop();
        break;
      case COLON: {
        const top = kinds.length - 1;
        if (top < 0 || kinds[top] !== 0) break;
        keyStarts[top] = lastStringStart;
        keyEnds[top] = lastStringEnd;
        pendingField = top === 0 && limitedFields.length > 0 ? limitedField(bytes, lastStringStart, lastStringEnd, limitedFields) : null;
        if (++counts[top] > keyLimit) {
          return { kind: 'keys', limit: keyLimit, count: counts[top], path: pathTo(bytes, top, kinds, counts, keyStarts, keyEnds) };
        }
        break;
      }
      case COMMA: {
        const top = kinds.length - 1;
        if (top >= 0 && kinds[top] === 1) {
          // n commas separate n + 1 elements.
          if (++counts[top] >= (top === 1 && countedOpen && counted ? counted.limit : Infinity)) {
            return { kind: 'items', limit: counted!.limit, path: counted!.field };
          }
        }
        if (top === 0) pendingField = null;
        break;
      }
    }
  }
  return null;
}

/** The limited field a top-level key names, compared on its bytes (the names are plain ASCII). */
function limitedField(bytes: Uint8Array, start: number, end: number, fields: string[]): string | null {
  const length = end - start - 2;
  for (const field of fields) {
    if (field.length !== length) continue;
    let same = true;
    for (let j = 0; j < length && same; j++) same = bytes[start + 1 + j] === field.charCodeAt(j);
    if (same) return field;
  }
  return null;
}

/** `tools[0].parameters.properties` for the container at `level`, from the keys and indexes open above it. */
function pathTo(bytes: Uint8Array, level: number, kinds: number[], counts: number[], keyStarts: number[], keyEnds: number[]): string | null {
  const parts: string[] = [];
  for (let l = 0; l < level; l++) {
    if (kinds[l] === 1) parts.push(`[${counts[l]}]`);
    else {
      let key: string;
      try {
        key = JSON.parse(Buffer.from(bytes.subarray(keyStarts[l], keyEnds[l])).toString('utf8')) as string;
      } catch {
        key = '?';
      }
      parts.push(parts.length === 0 ? key : `.${key}`);
    }
  }
  return parts.length === 0 ? null : parts.join('');
}

/** The 400 for a shape violation, the same from the byte scan and from the parsed-object check. */
export function shapeError(shape: JsonShapeViolation): InvalidRequestError {
  if (shape.kind === 'depth') {
    return new InvalidRequestError(`The request body nests objects or arrays deeper than ${shape.limit} levels.`, null, 'nesting_too_deep');
  }
  if (shape.kind === 'items') {
    return new InvalidRequestError(`'${shape.path}' has more than ${shape.limit} entries, the most this gateway accepts.`, shape.path, `too_many_${shape.path}`);
  }
  const where = shape.path === null ? 'The request body' : `'${shape.path}'`;
  // The byte scan stops at the first key over the limit, so the message says "more than".
  return new InvalidRequestError(`${where} has more than ${shape.limit} keys, the most an object may have.`, shape.path, 'too_many_keys');
}

/**
 * `verify` hook for the JSON body parser: refuses a too-deep or too-wide
 * body, or one with more `tools` than a request may have, before it is
 * parsed. body-parser passes the error on with its own status.
 */
export function hostileJsonShapeGuard(maxTools: number): (req: unknown, res: unknown, body: Buffer) => void {
  const limits = { topLevelArrays: { tools: maxTools } };
  return (_req, _res, body) => {
    const shape = scanJsonShape(body, limits);
    if (shape) throw shapeError(shape);
  };
}
