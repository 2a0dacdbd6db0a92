/**
 * Streams the decoded value of one top-level string field (e.g. `input`) out
 * of a JSON object that arrives in pieces, so a freeform tool's input can be
 * relayed as `<call item>_input.delta` events while the model is still writing
 * `{"input": "...`. Anything it cannot follow (other fields first, odd
 * spacing) simply yields nothing until the end; `finish` then settles it.
 */
export class JsonStringFieldStreamer {
  private buffer = '';
  private valueStart = -1;
  private scanned = 0;
  private emitted = '';
  private closed = false;

  constructor(private readonly field: string) {}

  /** Feeds a piece of the JSON text; returns newly decoded characters of the field. */
  push(piece: string): string {
    this.buffer += piece;
    if (this.closed) return '';
    if (this.valueStart < 0) {
      const match = new RegExp(`^\\s*\\{\\s*"${this.field}"\\s*:\\s*"`).exec(this.buffer);
      if (!match) return '';
      this.valueStart = match[0].length;
      this.scanned = this.valueStart;
    }
    let out = '';
    let i = this.scanned;
    while (i < this.buffer.length) {
      const ch = this.buffer[i];
      if (ch === '"') {
        this.closed = true;
        i++;
        break;
      }
      if (ch !== '\\') {
        out += ch;
        i++;
        continue;
      }
      // An escape sequence: wait until it is complete.
      const next = this.buffer[i + 1];
      if (next === undefined) break;
      if (next === 'u') {
        if (i + 6 > this.buffer.length) break;
        out += String.fromCharCode(parseInt(this.buffer.slice(i + 2, i + 6), 16));
        i += 6;
        continue;
      }
      out += ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[next] ?? next;
      i += 2;
    }
    this.scanned = i;
    this.emitted += out;
    return out;
  }

  /** The whole JSON text is in: the final value, and what was not yet streamed of it. */
  finish(full: string): { value: string; rest: string } {
    let value = full;
    try {
      const parsed: unknown = JSON.parse(full);
      if (parsed && typeof parsed === 'object' && typeof (parsed as Record<string, unknown>)[this.field] === 'string') {
        value = (parsed as Record<string, string>)[this.field];
      }
    } catch {
      // Not JSON: the model wrote the freeform input directly.
    }
    const rest = value.startsWith(this.emitted) ? value.slice(this.emitted.length) : '';
    return { value, rest };
  }
}
