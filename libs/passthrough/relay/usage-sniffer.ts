import { StreamLines } from '#core/protocol/stream-lines.js';
import type { Usage } from '#tool-sdk/items.js';

/** Longest partial SSE line carried between chunks while looking for usage; a longer one is passed on, never held. */
const MAX_CARRY_CHARS = 256 * 1024;

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/**
 * The tokens an OpenAI-style `usage` block (chat, completions, embeddings)
 * reports, in the terms of the limiter and the token counters: prompt and
 * completion tokens, and the cached and reasoning details where the server
 * gives them.
 */
export function usageOf(body: unknown): Usage | null {
  const usage = (body as { usage?: unknown } | null)?.usage as Record<string, unknown> | null | undefined;
  if (!usage || typeof usage !== 'object') return null;
  const input = count(usage.prompt_tokens);
  const output = count(usage.completion_tokens);
  const total = typeof usage.total_tokens === 'number' ? count(usage.total_tokens) : input + output;
  const cached = count((usage.prompt_tokens_details as { cached_tokens?: unknown } | null | undefined)?.cached_tokens);
  const reasoning = count((usage.completion_tokens_details as { reasoning_tokens?: unknown } | null | undefined)?.reasoning_tokens);
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: total,
    input_tokens_details: { cached_tokens: cached },
    output_tokens_details: { reasoning_tokens: reasoning },
  };
}

/** The chunk that carries only the usage (`choices: []`), which `include_usage` adds at a stream's end. */
function isUsageChunk(chunk: unknown): boolean {
  const c = chunk as { choices?: unknown; usage?: unknown } | null;
  return !!c && Array.isArray(c.choices) && c.choices.length === 0 && !!c.usage && typeof c.usage === 'object';
}

/**
 * Reads the usage a relayed stream reports (its usage chunk) without holding
 * the stream back: chunks go on as they come; only lines that mention usage
 * are parsed. With `strip` (the gateway asked the upstream for the usage
 * chunk, the client did not) that chunk is also taken out of what the client
 * gets: then text is passed on by whole lines, so a line is held only until
 * its end arrives (never longer than `MAX_CARRY_CHARS`).
 */
export class UsageSniffer {
  private readonly lines = new StreamLines(MAX_CARRY_CHARS);
  /** The last whole line was the stripped usage chunk. */
  private dropped = false;
  usage: Usage | null = null;

  constructor(private readonly strip = false) {}

  /** Takes an upstream chunk; returns what to write to the client. */
  push(chunk: string): string {
    let out = '';
    this.lines.push(
      chunk,
      (line) => {
        const keep = this.line(line);
        // The blank line that ended a stripped event goes with it: the client's stream is the one it asked for, byte for byte.
        const ending = this.dropped && line === '';
        this.dropped = !keep;
        if (this.strip && keep && !ending) out += `${line}\n`;
      },
      (raw) => {
        // Too long to be a usage chunk: passed on as it is, not held.
        this.dropped = false;
        out += raw;
      },
    );
    return this.strip ? out : chunk;
  }

  /** The stream ended: what was still held (a last line without its newline; without `strip` it was passed on already). */
  end(): string {
    const last = this.lines.end();
    return this.line(last) && this.strip ? last : '';
  }

  /** Counts a usage line; false when it is the usage chunk and is being stripped. */
  private line(line: string): boolean {
    if (!line.startsWith('data:') || !line.includes('"usage"')) return true;
    try {
      const chunk = JSON.parse(line.slice(5)) as unknown;
      const found = usageOf(chunk);
      if (found) this.usage = found;
      return !(this.strip && isUsageChunk(chunk));
    } catch {
      // Not JSON ([DONE], a server's comment): nothing to count.
      return true;
    }
  }
}
