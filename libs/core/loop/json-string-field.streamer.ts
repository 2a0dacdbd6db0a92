/**
 * Streams the decoded value of one top-level string field (e.g. `input`) out
 * of a JSON object that arrives in pieces, so a freeform tool's input can be
 * relayed as `<call item>_input.delta` events while the model is still writing
 * `{"input": "...`. Anything it cannot follow (other fields first, odd
 * spacing) simply yields nothing until the end; `finishField` then settles it.
 *
 * A value, like the round state that holds it: `pushField` returns the next
 * one and leaves the one it was given as it was.
 */
export interface FieldStream {
  readonly field: string;
  /** The JSON text so far, while the value is still open. */
  readonly buffer: string;
  /** Where the value's characters begin in `buffer`; -1 until the key and its quote arrived. */
  readonly valueStart: number;
  /** How far `buffer` is decoded. */
  readonly scanned: number;
  /** What was decoded so far. */
  readonly emitted: string;
  /** The value's closing quote arrived: nothing more is decoded. */
  readonly closed: boolean;
}

export function startField(field: string): FieldStream {
  return { field, buffer: '', valueStart: -1, scanned: 0, emitted: '', closed: false };
}

/** Feeds a piece of the JSON text: the next stream, and newly decoded characters of the field. */
export function pushField(stream: FieldStream, piece: string): { stream: FieldStream; decoded: string } {
  if (stream.closed) return { stream, decoded: '' };
  const buffer = stream.buffer + piece;
  let valueStart = stream.valueStart;
  let i = stream.scanned;
  if (valueStart < 0) {
    const match = new RegExp(`^\\s*\\{\\s*"${stream.field}"\\s*:\\s*"`).exec(buffer);
    if (!match) return { stream: { ...stream, buffer }, decoded: '' };
    valueStart = match[0].length;
    i = valueStart;
  }
  let out = '';
  let closed = false;
  while (i < buffer.length) {
    const ch = buffer[i];
    if (ch === '"') {
      closed = true;
      i++;
      break;
    }
    if (ch !== '\\') {
      out += ch;
      i++;
      continue;
    }
    // An escape sequence: wait until it is complete.
    const next = buffer[i + 1];
    if (next === undefined) break;
    if (next === 'u') {
      if (i + 6 > buffer.length) break;
      out += String.fromCharCode(parseInt(buffer.slice(i + 2, i + 6), 16));
      i += 6;
      continue;
    }
    out += ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[next] ?? next;
    i += 2;
  }
  return { stream: { field: stream.field, buffer, valueStart, scanned: i, emitted: stream.emitted + out, closed }, decoded: out };
}

/** The whole JSON text is in: the final value, and what was not yet streamed of it. */
export function finishField(stream: FieldStream, full: string): { value: string; rest: string } {
  let value = full;
  try {
    const parsed: unknown = JSON.parse(full);
    if (parsed && typeof parsed === 'object' && typeof (parsed as Record<string, unknown>)[stream.field] === 'string') {
      value = (parsed as Record<string, string>)[stream.field];
    }
  } catch {
    // Not JSON: the model wrote the freeform input directly.
  }
  const rest = value.startsWith(stream.emitted) ? value.slice(stream.emitted.length) : '';
  return { value, rest };
}
