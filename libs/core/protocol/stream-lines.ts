/**
 * An event stream's text cut into whole lines as its chunks arrive, for
 * relays that read or rewrite `data:` lines in passing (usage, model names).
 * Only a line whose end has not come yet is held, never more than
 * `maxCarryChars` of it: a longer line goes on as raw text, and so does the
 * rest of it up to its newline, so a relay never holds a stream back.
 */
export class StreamLines {
  private carry = '';
  /** Inside a line too long to hold: raw text until its end. */
  private passing = false;

  constructor(private readonly maxCarryChars: number) {}

  /**
   * Hands each whole line of what has arrived (without its newline) to
   * `line`, and the text of an over-long line to `raw` (its end with its newline).
   */
  push(chunk: string, line: (text: string) => void, raw: (text: string) => void): void {
    let text = chunk;
    if (this.passing) {
      const end = text.indexOf('\n');
      if (end < 0) return raw(text);
      raw(text.slice(0, end + 1));
      text = text.slice(end + 1);
      this.passing = false;
    }
    const lines = (this.carry + text).split('\n');
    const tail = lines.pop() ?? '';
    for (const whole of lines) line(whole);
    if (tail.length > this.maxCarryChars) {
      raw(tail);
      this.carry = '';
      this.passing = true;
    } else {
      this.carry = tail;
    }
  }

  /** The stream ended: the last line if it had no newline ('' when none is held). */
  end(): string {
    const last = this.carry;
    this.carry = '';
    this.passing = false;
    return last;
  }
}
