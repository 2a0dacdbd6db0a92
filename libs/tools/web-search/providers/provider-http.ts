import { SearchProviderError } from './search-provider.error.js';

export interface ProviderRequest {
  provider: string;
  method: 'GET' | 'POST';
  url: URL;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** The caller's signal: client gone or call deadline. */
  signal: AbortSignal;
  /** Epoch ms by which the request (and any retry) must be over. */
  deadline: number;
}

/** A retry only pays when there is time left for the retried request itself. */
const MIN_ATTEMPT_MS = 500;
/** Longer hints mean "come back later", not "in a moment": fail and pass the hint on. */
const MAX_RETRY_WAIT_MS = 10_000;
const DETAIL_CHARS = 200;

/**
 * One JSON request to a search API with the failure modes mapped to
 * `SearchProviderError`. A 429 whose `retry-after` fits before the deadline
 * is retried once; any other failure is final: the model can decide to search
 * again, and a gateway that retries behind its back only hides the problem.
 */
export async function requestJson(req: ProviderRequest): Promise<unknown> {
  try {
    return await attempt(req);
  } catch (err) {
    if (!(err instanceof SearchProviderError) || err.kind !== 'rate_limited' || err.retryAfterSeconds === undefined) throw err;
    const waitMs = err.retryAfterSeconds * 1000;
    if (waitMs > MAX_RETRY_WAIT_MS || Date.now() + waitMs + MIN_ATTEMPT_MS > req.deadline) throw err;
    await sleep(waitMs, req.signal, req.provider);
    return attempt(req);
  }
}

async function attempt(req: ProviderRequest): Promise<unknown> {
  const { provider } = req;
  const budget = req.deadline - Date.now();
  if (req.signal.aborted) throw aborted(provider);
  if (budget <= 0) throw new SearchProviderError(`${provider} was not asked: the search deadline had already passed`, provider, 'timeout');
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), budget);
  const signal = AbortSignal.any([req.signal, timeout.signal]);
  const started = Date.now();
  try {
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(req.url, {
      method: req.method,
      headers,
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal,
    });
    const text = await res.text();
    if (res.ok) return parseBody(provider, res.status, text);
    throw httpError(provider, res.status, text, res.headers.get('retry-after'));
  } catch (err) {
    if (err instanceof SearchProviderError) throw err;
    if (req.signal.aborted) throw aborted(provider);
    if (timeout.signal.aborted) {
      throw new SearchProviderError(`${provider} did not answer within ${Date.now() - started} ms`, provider, 'timeout');
    }
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new SearchProviderError(`${provider} could not be reached (${reason})`, provider, 'network');
  } finally {
    clearTimeout(timer);
  }
}

function parseBody(provider: string, status: number, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new SearchProviderError(`${provider} answered HTTP ${status} with a body that is not JSON: ${snippetOf(text)}`, provider, 'malformed', status);
  }
}

function httpError(provider: string, status: number, text: string, retryAfter: string | null): SearchProviderError {
  const detail = errorDetail(text);
  const suffix = detail ? `: ${detail}` : '';
  if (status === 401 || status === 403) {
    return new SearchProviderError(`${provider} refused the request (HTTP ${status})${suffix}`, provider, 'auth', status);
  }
  if (status === 429) {
    const seconds = parseRetryAfter(retryAfter);
    const hint = seconds === undefined ? 'no retry hint was given' : `retry after ${seconds} s`;
    return new SearchProviderError(`${provider} rate limit reached (HTTP 429); ${hint}${suffix}`, provider, 'rate_limited', status, seconds);
  }
  if (status >= 500) return new SearchProviderError(`${provider} failed (HTTP ${status})${suffix}`, provider, 'server', status);
  return new SearchProviderError(`${provider} rejected the request (HTTP ${status})${suffix}`, provider, 'http', status);
}

/** `retry-after` is either delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** The human part of an error body, whichever of the common envelopes it uses. */
function errorDetail(text: string): string {
  if (!text.trim()) return '';
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const candidates = [
      (body.error as Record<string, unknown> | undefined)?.detail,
      (body.error as Record<string, unknown> | undefined)?.message,
      body.error,
      body.message,
      (body.detail as Record<string, unknown> | undefined)?.error,
      body.detail,
    ];
    const found = candidates.find((c) => typeof c === 'string' && c.trim().length > 0);
    return typeof found === 'string' ? snippetOf(found) : '';
  } catch {
    // not JSON: the text itself is the detail
  }
  return snippetOf(text);
}

function snippetOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > DETAIL_CHARS ? `${flat.slice(0, DETAIL_CHARS)}…` : flat;
}

function aborted(provider: string): SearchProviderError {
  return new SearchProviderError(`the search on ${provider} was cancelled`, provider, 'aborted');
}

function sleep(ms: number, signal: AbortSignal, provider: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(aborted(provider));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(aborted(provider));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Fails with a `malformed` error unless `value` is an array (or absent, when `optional`). */
export function arrayField(provider: string, value: unknown, field: string, optional = false): unknown[] {
  if (Array.isArray(value)) return value;
  if (optional && (value === undefined || value === null)) return [];
  throw new SearchProviderError(`${provider} answered without the documented "${field}" array`, provider, 'malformed');
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Snippets arrive with highlighting markup (`<strong>`) and entities; the model wants plain text. */
export function plainText(value: unknown): string {
  if (typeof value !== 'string') return '';
  return value
    .replace(/<[^>]*>/g, '')
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+\d*);/gi, (whole, name: string) => {
      const lower = name.toLowerCase();
      if (lower.startsWith('#x')) return String.fromCodePoint(parseInt(lower.slice(2), 16));
      if (lower.startsWith('#')) return String.fromCodePoint(parseInt(lower.slice(1), 10));
      return ENTITIES[lower] ?? whole;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

/** A provider's result entry with the fields every mapper needs; `undefined` when it has no usable URL. */
export function resultOf(title: unknown, url: unknown, snippet: unknown, date: unknown): { title: string; url: string; snippet: string; date?: string } | undefined {
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return undefined;
  const result: { title: string; url: string; snippet: string; date?: string } = {
    title: plainText(title) || url,
    url,
    snippet: plainText(snippet),
  };
  if (typeof date === 'string' && date.trim()) result.date = date.trim();
  return result;
}

/** The top level of every documented answer is an object; anything else is a broken body. */
export function objectBody(provider: string, body: unknown): Record<string, unknown> {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  throw new SearchProviderError(`${provider} answered with JSON that is not the documented object`, provider, 'malformed');
}
