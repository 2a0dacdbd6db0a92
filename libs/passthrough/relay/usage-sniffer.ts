import type { Usage } from '#tool-sdk/items.js';

/** Longest partial SSE line carried between chunks while looking for usage; a longer one is passed on, never held. */
const MAX_CARRY_CHARS = 256 * 1024;

/** The tokens an OpenAI-style `usage` block (chat, completions, embeddings) reports, in the limiter's terms. */
export function usageOf(body: unknown): Usage | null {
  const usage = (body as { usage?: unknown } | null)?.usage as Record<string, unknown> | null | undefined;
  if (!usage || typeof usage !== 'object') return null;
  const input = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0;
  const output = typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0;
  const total = typeof usage.total_tokens === 'number' ? usage.total_tokens : input + output;
  return { input_tokens: input, output_tokens: output, total_tokens: total, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
}

/**
 * Reads the usage a relayed stream reports (its last chunk, when the client
 * asked `stream_options.include_usage`) without holding the stream back:
 * chunks go on as they come; only lines that mention usage are parsed.
 */
export class UsageSniffer {
  private carry = '';
  usage: Usage | null = null;

  push(chunk: string): void {
    const text = this.carry + chunk;
    const lines = text.split('\n');
    this.carry = lines.pop() ?? '';
    if (this.carry.length > MAX_CARRY_CHARS) this.carry = '';
    for (const line of lines) this.line(line);
  }

  end(): void {
    this.line(this.carry);
    this.carry = '';
  }

  private line(line: string): void {
    if (!line.startsWith('data:') || !line.includes('"usage"')) return;
    try {
      const found = usageOf(JSON.parse(line.slice(5)));
      if (found) this.usage = found;
    } catch {
      // Not JSON ([DONE], a server's comment): nothing to count.
    }
  }
}
