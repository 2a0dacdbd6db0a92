import { hash } from 'node:crypto';
import { urlSecrets } from '#tool-sdk/index.js';
import type { OperatorServerConfig } from './mcp.config.js';

/** The pool key's digest of a declaration without headers: what `remote` would compute for `[]`. */
const NO_HEADERS_DIGEST = hash('sha256', JSON.stringify([]), 'hex');

/**
 * One MCP server as the pool knows it: what to connect to, and the key its
 * pooled connection lives under.
 *
 * Request-declared credentials (`headers`, `authorization`) live in a private
 * field, and `toJSON` / `inspect` leave them out, so a target that ends up in
 * a log line or a serialized object does not carry them along.
 */
export class McpTarget {
  readonly #headers: Readonly<Record<string, string>>;

  private constructor(
    /** Pool key: the operator label, or the URL plus a hash of the headers. */
    readonly key: string,
    readonly label: string,
    readonly kind: 'operator' | 'remote',
    readonly url: URL | undefined,
    readonly operator: OperatorServerConfig | undefined,
    headers: Record<string, string>,
  ) {
    this.#headers = Object.freeze({ ...headers });
  }

  static operator(server: OperatorServerConfig): McpTarget {
    return new McpTarget(`operator:${server.label}`, server.label, 'operator', server.url ? new URL(server.url) : undefined, server, server.headers ?? {});
  }

  /**
   * Requests that declare the same URL with the same credentials share a
   * connection; different credentials never do, since a server may scope
   * what it lists and allows by them.
   */
  static remote(label: string, url: URL, headers: Record<string, string>): McpTarget {
    const canonical = Object.entries(headers)
      .map(([k, v]) => [k.toLowerCase(), v])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    // Per request: a declaration without headers has a fixed digest, others the one-shot hash (not a Hash object).
    const digest = canonical.length === 0 ? NO_HEADERS_DIGEST : hash('sha256', JSON.stringify(canonical), 'hex');
    return new McpTarget(`remote:${url.href}#${digest}`, label, 'remote', url, undefined, headers);
  }

  /**
   * The same server, pooled apart for `owner`. Operator servers are the
   * operator's, reached under the operator's own credentials, and stay shared.
   */
  forOwner(owner: string | null): McpTarget {
    if (this.kind !== 'remote' || owner === null) return this;
    return new McpTarget(`${this.key}@${owner}`, this.label, this.kind, this.url, this.operator, this.#headers);
  }

  get transport(): 'streamable-http' | 'sse' | 'stdio' | 'auto' {
    return this.operator?.transport ?? 'auto';
  }

  /** Headers to send on every HTTP request to the server. */
  headers(): Record<string, string> {
    return { ...this.#headers };
  }

  /**
   * A digest of what an approval is given for: the server (kind, label, URL
   * with its query) and the credentials calls carry, never the credentials
   * themselves. The same for every owner (`forOwner` keeps it).
   */
  declarationDigest(): string {
    const headers = Object.entries(this.#headers)
      .map(([k, v]) => [k.toLowerCase(), v])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return hash('sha256', JSON.stringify([this.kind, this.label, this.url?.href ?? null, this.operator?.command ?? null, headers]), 'hex');
  }

  /** True when calls carry request-declared credentials: headers, or secrets in the URL's query. */
  carriesCredentials(): boolean {
    return Object.keys(this.#headers).length > 0 || Boolean(this.url?.search);
  }

  /** Everything that must never appear in a message: header values, and bearer tokens on their own. */
  secrets(): string[] {
    const values = new Set<string>();
    for (const value of Object.values(this.#headers)) {
      if (value.length >= 4) values.add(value);
      const token = /^\S+\s+(\S{4,})$/.exec(value)?.[1];
      if (token) values.add(token);
    }
    for (const value of Object.values(this.operator?.env ?? {})) if (value.length >= 4) values.add(value);
    if (this.url) for (const value of urlSecrets(this.url.href)) values.add(value);
    return [...values].sort((a, b) => b.length - a.length);
  }

  /** Replaces any secret of this target found in `text`. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets()) out = out.split(secret).join('[redacted]');
    return out;
  }

  /**
   * The server as a tenant may read it: its label alone. Where it is (an
   * operator server's internal address, what answers on a port) is the log's.
   */
  publicName(): string {
    return `"${this.label}"`;
  }

  /** Where the server is, for log lines: origin only (a path or query may carry tokens). Never in a client-visible message. */
  describe(): string {
    if (this.url) return `"${this.label}" (${this.url.origin})`;
    return `"${this.label}" (stdio: ${this.operator?.command ?? '?'})`;
  }

  toJSON(): Record<string, unknown> {
    return { label: this.label, kind: this.kind, origin: this.url?.origin ?? null };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `McpTarget ${this.describe()}`;
  }
}
