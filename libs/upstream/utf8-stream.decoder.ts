import { isUtf8 } from 'node:buffer';

/**
 * Decodes a body's chunks to text as `new TextDecoder('utf-8')` does with
 * `{ stream: true }`: a leading byte order mark is dropped, a character
 * split across chunks is kept whole, invalid bytes become U+FFFD.
 *
 * `TextDecoder` decodes through ICU, about 17 instructions per byte, which
 * was a few per cent of a streamed request. A chunk that is valid UTF-8 on
 * its own (every chunk of an ASCII stream) comes out of `toString` the
 * same, through V8's own decoder; validity is checked natively
 * (`buffer.isUtf8`). From the first chunk that is not (a character split
 * across reads, or invalid bytes) on, the rest of the body goes through a
 * `TextDecoder`, which then holds the state between chunks as before.
 */
export class Utf8StreamDecoder {
  private decoder?: InstanceType<typeof TextDecoder>;
  /** Text (or bytes) went out already: a byte order mark from here on is a character, not a mark. */
  private begun = false;

  decode(chunk: Buffer): string {
    if (!this.decoder) {
      if (chunk.length === 0) return '';
      if (isUtf8(chunk)) {
        const text = chunk.toString('utf8');
        const first = !this.begun;
        this.begun = true;
        return first && text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text;
      }
      this.decoder = new TextDecoder('utf-8', { ignoreBOM: this.begun });
      this.begun = true;
    }
    return this.decoder.decode(chunk, { stream: true });
  }

  /** What the stream's last bytes leave: U+FFFD for a character cut short, else nothing. */
  end(): string {
    return this.decoder ? this.decoder.decode() : '';
  }
}

const BYTE_ORDER_MARK = 0xfeff;
