import { StreamLines } from '#core/protocol/stream-lines.js';
import type { RelayBody } from '#core/upstream/upstream-relay.interface.js';

/** Longest partial SSE line held back while waiting for its end; a longer one is passed on as it is. */
const MAX_CARRY_CHARS = 256 * 1024;

const isRecord = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * One relayed JSON text (a whole body, or one SSE `data:` payload) with its
 * top-level `model` shown as `name`. Only that value is rewritten, the rest of
 * the bytes stay as the server sent them; a text that is not a JSON object
 * with a string `model` (errors, `[DONE]`) is left alone.
 */
export function withModelName(json: string, name: string): string {
  if (!json.includes('"model"')) return json;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return json;
  }
  if (!isRecord(parsed) || typeof parsed.model !== 'string' || parsed.model === name) return json;
  // The top-level key is the first `"model"` followed by its value: inside a string value the quotes would be escaped.
  const served = new RegExp(`("model"\\s*:\\s*)${escapeRegExp(JSON.stringify(parsed.model))}`);
  if (served.test(json)) return json.replace(served, (_m, key: string) => `${key}${JSON.stringify(name)}`);
  return JSON.stringify({ ...parsed, model: name });
}

/**
 * Rewrites an event stream's `data:` lines as they pass, holding only a
 * line whose end has not come yet (`StreamLines`).
 */
export class ModelNameRewriter {
  private readonly lines = new StreamLines(MAX_CARRY_CHARS);

  constructor(private readonly name: string) {}

  push(chunk: string): string {
    let out = '';
    this.lines.push(
      chunk,
      (line) => (out += `${this.line(line)}\n`),
      (raw) => (out += raw),
    );
    return out;
  }

  /** The stream ended: a last line without its newline. */
  end(): string {
    return this.line(this.lines.end());
  }

  private line(line: string): string {
    if (!line.startsWith('data:')) return line;
    const payload = line.slice(5);
    const renamed = withModelName(payload, this.name);
    return renamed === payload ? line : `data:${renamed}`;
  }
}

/**
 * A relayed answer as the client named the model: a catalog maps a public
 * name to the server's, and the server answers with its own (`model` in a
 * chat completion, a completion, an embeddings list, every streamed chunk).
 * The Responses and Messages surfaces show the public name; so does this.
 */
export function renamedRelayBody(body: RelayBody, name: string): RelayBody {
  return {
    status: body.status,
    contentType: body.contentType,
    async json() {
      const value = await body.json();
      return isRecord(value) && typeof value.model === 'string' ? { ...value, model: name } : value;
    },
    async text(onText) {
      const rewriter = new ModelNameRewriter(name);
      await body.text((chunk) => {
        const out = rewriter.push(chunk);
        if (out !== '') onText(out);
      });
      const rest = rewriter.end();
      if (rest !== '') onText(rest);
    },
  };
}
