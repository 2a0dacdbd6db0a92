import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { upstreamHeaderProblem } from './upstream-headers.js';
import type { TimeoutConfig, UpstreamConfig } from '#config/gateway-config.js';
import { redactUrl } from '#config/url-redaction.js';
import { dialectHint, missingV1Hint, notFoundDetail, notFoundMessage } from './upstream-hints.js';
import { UpstreamHttpError, UpstreamTimeoutError, UpstreamUnavailableError } from '#tool-sdk/errors.js';
import { contextOverflowError } from './context-overflow.js';
import type { FlowGate } from '#core/protocol/flow-gate.js';
import type { AbortLike } from '#core/protocol/cancellation.js';
import { chunksLength, endWithChunks, jsonChunks } from '#tool-sdk/helpers/frozen-json.js';
import { isJsonObject } from './wire-values.js';
import { Utf8StreamDecoder } from './utf8-stream.decoder.js';
import { withPlainOptions } from '#tool-sdk/helpers/plain-agent-options.js';

export interface HttpCall {
  method: 'GET' | 'POST';
  /** Appended to the configured base URL, e.g. `/responses`. */
  path: string;
  /**
   * The path is relative to the server root rather than the base URL: vLLM
   * serves `/tokenize` beside `/v1`, not under it. The base URL's trailing
   * `/v1` is dropped (a proxy prefix before it is kept).
   */
  fromRoot?: boolean;
  /** Sent as JSON when present. */
  body?: unknown;
  /** An `AbortSignal`, or the loop's `Cancellation` (which spares making one). */
  signal?: AbortLike;
  accept?: string;
  /** Per-call overrides: the readiness probe must not wait the full inference deadlines. */
  timeouts?: Partial<TimeoutConfig>;
  /** While paused, the body is not read (the consumer downstream is slower than the upstream). */
  flow?: FlowGate;
  /** Extra request headers (the per-request context's); they never replace the transport's own. */
  headers?: Readonly<Record<string, string>>;
}

/** A successful (status < 400) upstream answer whose body has not been read yet. */
export interface UpstreamBody {
  readonly url: string;
  readonly status: number;
  readonly contentType: string;
  /**
   * The whole body as JSON, read by `parse` from its bytes (`JSON.parse` of its UTF-8 text unless given: a
   * reader may decode only part of it); `upstream_bad_response` when it is not JSON.
   */
  json(parse?: (body: Buffer) => unknown): Promise<unknown>;
  /**
   * The body as decoded text chunks until it ends. A throw from `onText`
   * aborts the exchange and rejects with the thrown error.
   */
  text(onText: (chunk: string) => void): Promise<void>;
  /**
   * The reader has everything it needs (a terminal event arrived): resolve
   * `text()` now and let the rest of the body drain in the background so the
   * keep-alive socket can be reused instead of destroyed.
   */
  release(): void;
}

/** A body's JSON, from its UTF-8 text: what `json` reads without a parser of its own. */
function parseUtf8Json(body: Buffer): unknown {
  return JSON.parse(body.toString('utf8'));
}

/** Bytes of an error body kept for its message; the rest is read and discarded. */
const ERROR_BODY_LIMIT = 64 * 1024;
/** How long a released body may take to finish before its socket is dropped. */
const DRAIN_LIMIT_MS = 1_000;

const UNREACHABLE_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  ECONNABORTED: 'connection aborted',
};

/** Paths whose parsed target is kept; a transport that is sent more (none of the dialects does) parses the rest per call. */
const MAX_KEPT_TARGETS = 32;

interface Target {
  /** Protocol, host, port, path and credentials, as `http.request` takes them. */
  readonly options: http.RequestOptions;
  /** The URL as messages show it (`redactUrl`). */
  readonly display: string;
  /** The `Host` header Node writes for `options` (see `headerList`). */
  readonly host: string;
  /** The `Authorization` header Node writes for the URL's credentials, when it has any. */
  readonly basic?: string;
}

/** Error codes that mean a pooled socket was closed by the server while idle. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/**
 * The one HTTP transport both dialects use: JSON out, JSON or an event stream
 * back, over a keep-alive agent. It owns the four deadlines of `TimeoutConfig`
 * and translates every transport failure into a domain error, so the dialect
 * clients only ever see `GatewayError`s.
 */
export class HttpTransport {
  readonly baseUrl: string;
  /** The base URL as messages show it: no credentials, no query values. */
  readonly displayUrl: string;
  private readonly agent: http.Agent;
  private readonly secure: boolean;
  /** Parsed targets by path (see `targetOf`). */
  private readonly targets = new Map<string, Target>();

  constructor(
    private readonly upstream: UpstreamConfig,
    private readonly timeouts: TimeoutConfig,
  ) {
    this.baseUrl = upstream.baseUrl.replace(/\/+$/, '');
    this.displayUrl = redactUrl(this.baseUrl);
    this.secure = new URL(this.baseUrl).protocol === 'https:';
    const options: http.AgentOptions = { keepAlive: true, maxSockets: upstream.maxSockets, scheduling: 'lifo' };
    this.agent = withPlainOptions(this.secure ? new https.Agent(options) : new http.Agent(options));
  }

  /**
   * Where a call goes, as request options and as messages show it. The
   * dialects call a handful of fixed paths, so each is parsed once rather
   * than as a new `URL` (and a second one to redact it) per call.
   */
  private targetOf(call: HttpCall): Target {
    const key = `${call.fromRoot ? 'root' : 'base'} ${call.path}`;
    let target = this.targets.get(key);
    if (!target) {
      const url = new URL((call.fromRoot ? this.baseUrl.replace(/\/v1$/, '') : this.baseUrl) + call.path);
      const options = urlToHttpOptions(url);
      target = {
        options,
        display: redactUrl(url.href),
        host: hostHeader(options, this.secure ? 443 : 80),
        basic: options.auth ? `Basic ${Buffer.from(options.auth).toString('base64')}` : undefined,
      };
      if (this.targets.size < MAX_KEPT_TARGETS) this.targets.set(key, target);
    }
    return target;
  }

  /** Sends the call; resolves once response headers with a status below 400 arrive. */
  open(call: HttpCall): Promise<UpstreamBody> {
    // A kept tool list's wire form goes out as its kept bytes (frozen-json.ts), not serialized, encoded or copied per request.
    const payload = call.body === undefined ? undefined : jsonChunks(call.body);
    const headers: http.OutgoingHttpHeaders = {};
    // Context headers come from operators' forward lists and host code; the framing ones stay the
    // transport's, and what it sets below (accept, content type, its key) wins.
    for (const [name, value] of Object.entries(call.headers ?? {})) {
      if (upstreamHeaderProblem(name.toLowerCase(), value) === null) headers[name.toLowerCase()] = value;
    }
    headers.accept = call.accept ?? 'application/json';
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = chunksLength(payload);
    }
    if (this.upstream.apiKey) headers.authorization = `Bearer ${this.upstream.apiKey}`;
    const target = this.targetOf(call);
    const { hostname, port, path, auth } = target.options;
    // A literal, not the target's options spread and then grown: that was most of this function's own time.
    // Node copies these into new objects twice more per request (the request's, then the agent's with
    // its own options), member by member: only what it needs goes in. The protocol is the agent's, and
    // a request whose headers are a list carries the URL's credentials in it.
    const options: http.RequestOptions = payload
      ? { hostname, port, path, method: call.method, headers: headerList(headers, target), agent: this.agent }
      : { hostname, port, path, auth, method: call.method, headers, agent: this.agent };
    // The retry after a stale pooled socket takes a new connection: the pool's other idle sockets
    // went quiet at the same time as the first and are likely closed by the server too.
    const dispatch = (fresh = false): http.ClientRequest => {
      const opts = fresh ? { ...options, agent: false as const } : options;
      return this.secure ? https.request(opts) : http.request(opts);
    };
    // Most calls use the transport's deadlines as they are; a stream holds its exchange's for as long as it runs.
    const limits = call.timeouts ? { ...this.timeouts, ...call.timeouts } : this.timeouts;
    return new Exchange(target.display, dispatch, payload, call.signal, limits, call.flow, {
      method: call.method,
      fromRoot: !!call.fromRoot,
    }).start();
  }

  async json(call: HttpCall): Promise<unknown> {
    return (await this.open(call)).json();
  }

  /** Closes pooled sockets; in-flight calls fail as if the upstream reset them. */
  close(): void {
    this.agent.destroy();
  }

  /**
   * The keep-alive pool right now: sockets carrying a request, idle pooled
   * sockets, and requests waiting for a socket. A socket still `active` after
   * every exchange settled is a leak.
   */
  poolStats(): UpstreamPoolStats {
    return { active: countSockets(this.agent.sockets), idle: countSockets(this.agent.freeSockets), queued: countSockets(this.agent.requests) };
  }
}

/**
 * `headers` as the name/value list Node writes as it is: what `http.request`
 * writes for the headers object, in the same order (the object's headers,
 * then `Host`, then the URL's credentials unless an authorization header is
 * set), checked the same way, without Node keeping each by name first and
 * looking three of them up again. Only for a request with a body, whose
 * `content-length` is among them: Node frames a bodiless request by what
 * `end()` is given, which a list written up front cannot know.
 */
function headerList(headers: http.OutgoingHttpHeaders, target: Target): string[] {
  const basic = headers.authorization ? undefined : target.basic;
  const list: string[] = [];
  let basicWritten = false;
  for (const name of Object.keys(headers)) {
    // An empty authorization header is replaced where it stands, as `setHeader` replaces it.
    if (basic !== undefined && name === 'authorization') {
      list.push('Authorization', basic);
      basicWritten = true;
    } else {
      list.push(name, String(headers[name]));
    }
  }
  list.push('Host', target.host);
  if (basic !== undefined && !basicWritten) list.push('Authorization', basic);
  return list;
}

/** The `Host` header Node's `ClientRequest` makes for these options (an IPv6 address in brackets, a port other than the default). */
function hostHeader(options: http.RequestOptions, defaultPort: number): string {
  let host = options.hostname || options.host || 'localhost';
  const colon = host.indexOf(':');
  if (colon !== -1 && host.includes(':', colon + 1) && host.charCodeAt(0) !== 91 /* [ */) host = `[${host}]`;
  const port = options.port || defaultPort;
  if (port && +port !== defaultPort) host += `:${port}`;
  return host;
}

export interface UpstreamPoolStats {
  active: number;
  idle: number;
  queued: number;
}

function countSockets(byOrigin: NodeJS.ReadOnlyDict<readonly unknown[]>): number {
  let n = 0;
  for (const list of Object.values(byOrigin)) n += list?.length ?? 0;
  return n;
}

const TIMER_NAMES = ['connect', 'firstByte', 'idle', 'total', 'drain'] as const;
type TimerName = (typeof TIMER_NAMES)[number];

/**
 * pending: waiting for response headers (the `open()` promise is pending)
 * open:    headers arrived, body not claimed yet
 * reading: a `json()`/`text()` promise is pending
 * draining: released by the reader; the body finishes in the background
 * done:    settled; timers cleared, listeners detached
 */
type Phase = 'pending' | 'open' | 'reading' | 'draining' | 'done';

interface Settler {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** One HTTP exchange, with at most one retry when a pooled socket turns out to be stale. */
class Exchange implements UpstreamBody {
  status = 0;
  contentType = '';

  private phase: Phase = 'pending';
  /** One slot per deadline rather than a Map: a stream holds its exchange for as long as it runs. */
  private readonly timers: Record<TimerName, NodeJS.Timeout | undefined> = { connect: undefined, firstByte: undefined, idle: undefined, total: undefined, drain: undefined };
  private req: http.ClientRequest | undefined;
  private res: http.IncomingMessage | undefined;
  private settler: Settler | undefined;
  /** A failure that happened while no promise was pending, reported to the next reader. */
  private failure: unknown;
  private retried = false;
  private onChunk: ((chunk: Buffer) => void) | undefined;
  private onEnd: (() => void) | undefined;

  constructor(
    readonly url: string,
    private readonly dispatch: (fresh?: boolean) => http.ClientRequest,
    /** Kept only while a stale-socket retry may still send it again. */
    private payload: Buffer[] | undefined,
    private readonly signal: AbortLike | undefined,
    private readonly limits: TimeoutConfig,
    private readonly flow?: FlowGate,
    /** How it was called, for an error that names the call (a 404's URL and fix). */
    private readonly call: { method: string; fromRoot: boolean } = { method: 'POST', fromRoot: false },
  ) {}

  private stopFlow: (() => void) | undefined;

  /**
   * Follows the flow gate while the body is read: a paused consumer stops the
   * socket (TCP backpressure reaches the upstream) and the idle clock, since
   * silence we asked for is not the upstream stalling.
   */
  private followFlow(): void {
    if (!this.flow || this.stopFlow) return;
    const apply = (paused: boolean): void => {
      if (this.phase !== 'reading' || !this.res) return;
      if (paused) {
        this.res.pause();
        this.disarm('idle');
      } else {
        this.res.resume();
        this.armIdle();
      }
    };
    this.stopFlow = this.flow.onChange(apply);
    if (this.flow.paused) apply(true);
  }

  start(): Promise<UpstreamBody> {
    return new Promise<UpstreamBody>((resolve, reject) => {
      const signal = this.signal;
      if (signal?.aborted) {
        this.phase = 'done';
        reject(abortReason(signal));
        return;
      }
      this.settler = { resolve: resolve as (value: unknown) => void, reject };
      signal?.addEventListener('abort', this.onAbort, { once: true });
      this.arm('total', this.limits.totalMs);
      this.send();
    });
  }

  json(parse: (body: Buffer) => unknown = parseUtf8Json): Promise<unknown> {
    const chunks: Buffer[] = [];
    return this.consume(
      (chunk) => chunks.push(chunk),
      () => {
        // Most answers arrive in one chunk, read as it is rather than copied into a new buffer first.
        const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        try {
          return parse(body);
        } catch {
          throw new UpstreamUnavailableError('The model server answered with a body that is not valid JSON.', 'upstream_bad_response').withDetail(`upstream ${this.url}`);
        }
      },
    );
  }

  text(onText: (chunk: string) => void): Promise<void> {
    // Keeps a multi-byte character split across chunks intact, as `TextDecoder` with `stream: true` does.
    const decoder = new Utf8StreamDecoder();
    return this.consume<void>(
      (chunk) => {
        const text = decoder.decode(chunk);
        if (text) onText(text);
      },
      () => {
        const rest = decoder.end();
        if (rest) onText(rest);
        return undefined;
      },
    );
  }

  release(): void {
    if (this.phase !== 'reading') return;
    this.phase = 'draining';
    // What is left is drained, not delivered: a paused consumer no longer matters.
    this.stopFlow?.();
    this.stopFlow = undefined;
    this.res?.resume();
    this.clearTimers();
    this.signal?.removeEventListener('abort', this.onAbort);
    const settler = this.settler;
    this.settler = undefined;
    settler?.resolve(undefined);
    // Nothing waits on a drain: it must never keep the process alive.
    this.arm('drain', Math.min(this.limits.idleMs, DRAIN_LIMIT_MS)).unref();
  }

  private send(): void {
    let req: http.ClientRequest;
    try {
      req = this.dispatch(this.retried);
    } catch (error) {
      // e.g. an API key with characters a header cannot carry: nothing was sent.
      const reason = error instanceof Error ? error.message : String(error);
      this.fail(new UpstreamUnavailableError('The model server could not be called.').withDetail(`upstream ${this.url} could not be called: ${reason}`));
      return;
    }
    this.req = req;
    // The one-off events let go of their handlers once heard: a stream keeps its request for as long as it runs.
    req.once('socket', (socket) => {
      if (req !== this.req || this.phase !== 'pending') return;
      // A pooled socket is already connected; only a fresh one has a connect phase to time.
      if (!socket.connecting) return;
      this.arm('connect', this.limits.connectMs);
      socket.once('connect', () => {
        if (req === this.req) this.disarm('connect');
      });
    });
    // The first-byte clock starts once the request is fully handed to the socket,
    // so time spent connecting or queued for a pooled socket is not counted twice.
    req.once('finish', () => {
      if (req !== this.req || this.phase !== 'pending') return;
      this.arm('firstByte', this.limits.firstByteMs);
    });
    req.once('response', (res) => this.onResponse(req, res));
    req.on('error', (error) => this.onRequestError(req, error));
    endWithChunks(req, this.payload ?? []);
  }

  private onRequestError(req: http.ClientRequest, error: Error): void {
    if (req !== this.req || this.phase === 'done') return;
    if (this.res) {
      this.onBodyBroken();
      return;
    }
    const code = (error as NodeJS.ErrnoException).code ?? '';
    // A keep-alive socket the server closed while idle fails on first write; the
    // request never reached the application, so one retry on a fresh socket is safe.
    if (!this.retried && req.reusedSocket && STALE_SOCKET_CODES.has(code)) {
      this.retried = true;
      this.disarm('connect');
      this.disarm('firstByte');
      this.send();
      return;
    }
    const reason = UNREACHABLE_REASONS[code] ?? error.message;
    // The caller learns that the model server is out of reach; where it is, and why, is the operator's.
    this.fail(new UpstreamUnavailableError('The model server is unreachable.').withDetail(`upstream ${this.url} is unreachable: ${reason}${code ? ` (${code})` : ''}`));
  }

  private onResponse(req: http.ClientRequest, res: http.IncomingMessage): void {
    if (req !== this.req || this.phase !== 'pending') {
      res.destroy();
      return;
    }
    this.res = res;
    // An answer came, so there is no retry left that would send the body again: a stream need not hold it.
    this.payload = undefined;
    this.disarm('connect');
    this.disarm('firstByte');
    this.status = res.statusCode ?? 0;
    this.contentType = String(res.headers['content-type'] ?? '').toLowerCase();
    res.on('end', () => this.onBodyEnd());
    res.on('error', () => this.onBodyBroken());
    res.on('close', () => {
      if (!res.complete) this.onBodyBroken();
    });
    // The body stays paused until a reader claims it; the idle clock already
    // runs so a reader that never comes cannot hold the socket forever.
    this.armIdle();

    if (this.status >= 400) {
      this.readErrorBody(res);
      return;
    }
    this.phase = 'open';
    const settler = this.settler;
    this.settler = undefined;
    settler?.resolve(this);
  }

  private readErrorBody(res: http.IncomingMessage): void {
    const chunks: Buffer[] = [];
    let kept = 0;
    this.onChunk = (chunk) => {
      if (kept >= ERROR_BODY_LIMIT) return;
      chunks.push(chunk);
      kept += chunk.length;
    };
    this.onEnd = () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const said = upstreamErrorMessage(raw);
      let message = said || res.statusMessage || http.STATUS_CODES[this.status] || `HTTP ${this.status}`;
      // A 404 the upstream explains itself (an unknown model) keeps its words as they are.
      // A bare 404, or one from outside /v1, is most often the base URL: the operator's detail names the URL called and
      // the fix; the caller reads that the model server answered 404 (with its own words, when it gave any).
      const hint = this.status === 404 ? missingV1Hint(this.url, this.call.fromRoot) : '';
      // A route the server does not have (not a model it does not know) at .../v1/responses: the chat dialect's server.
      const noSuchRoute = !said || (/not found/i.test(said) && !/model/i.test(said));
      const dialect = this.status === 404 && !hint && noSuchRoute ? dialectHint(this.url) : '';
      let detail: string | null = null;
      if (this.status === 404 && (!said || /^not found\.?$/i.test(said) || hint || dialect)) {
        const upstreamWords = said && !/^not found\.?$/i.test(said) ? said : undefined;
        message = `${notFoundMessage(upstreamWords)}${dialect}`;
        detail = `${notFoundDetail(this.call.method, this.url, upstreamWords, this.call.fromRoot)}${dialect}`;
      }
      // The body was read to the end, so the socket stays in the pool.
      const retryAfter = res.headers['retry-after'];
      const overflow = contextOverflowError(message, this.status);
      // The field the server blamed (vLLM and OpenAI-style servers name it) travels with the error, so pass-through callers see it.
      const param = upstreamErrorParam(raw);
      const classified = param ? { code: `upstream_${this.status}`, param } : null;
      const failure = overflow ?? new UpstreamHttpError(message, this.status, typeof retryAfter === 'string' ? retryAfter : undefined, classified);
      this.fail(failure.withDetail(detail ?? `upstream ${this.call.method} ${this.url} answered ${this.status}`), true);
    };
    res.on('data', (chunk: Buffer) => this.onData(chunk));
  }

  private consume<T>(onChunk: (chunk: Buffer) => void, onEnd: () => T): Promise<T> {
    if (this.phase !== 'open') {
      return Promise.reject(this.failure ?? new Error(`The body of ${this.url} was already consumed.`));
    }
    return new Promise<T>((resolve, reject) => {
      this.phase = 'reading';
      this.settler = { resolve: resolve as (value: unknown) => void, reject };
      this.onChunk = onChunk;
      this.onEnd = () => {
        let value: T;
        try {
          value = onEnd();
        } catch (error) {
          this.fail(error, true);
          return;
        }
        this.succeed(value);
      };
      this.res?.on('data', (chunk: Buffer) => this.onData(chunk));
      this.followFlow();
    });
  }

  private onData(chunk: Buffer): void {
    if (this.phase === 'draining' || this.phase === 'done') return;
    // Chunks already in flight still arrive after a pause; they do not restart the idle clock.
    if (!this.flow?.paused) this.armIdle();
    try {
      this.onChunk?.(chunk);
    } catch (error) {
      this.fail(error);
    }
  }

  private onBodyEnd(): void {
    if (this.phase === 'draining') {
      // Fully read: the agent returns the socket to the pool on its own.
      this.phase = 'done';
      this.clearTimers();
      return;
    }
    if (this.phase === 'done') return;
    this.onEnd?.();
  }

  private onBodyBroken(): void {
    if (this.phase === 'done') return;
    if (this.phase === 'draining') {
      this.fail(undefined);
      return;
    }
    this.fail(
      new UpstreamUnavailableError('The model server closed the connection in the middle of the response.', 'upstream_stream_error').withDetail(
        `upstream ${this.url} closed the connection mid-response`,
      ),
    );
  }

  private readonly onAbort = (): void => {
    this.fail(this.signal ? abortReason(this.signal) : new Error('aborted'));
  };

  private succeed(value: unknown): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.detach();
    const settler = this.settler;
    this.settler = undefined;
    settler?.resolve(value);
  }

  /**
   * Ends the exchange. `error === undefined` ends it silently (a drain that gave up).
   * `keepSocket` is for failures detected after the body was fully read.
   */
  private fail(error: unknown, keepSocket = false): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.detach();
    if (!keepSocket) {
      this.res?.destroy();
      this.req?.destroy();
    }
    if (error === undefined) return;
    const settler = this.settler;
    this.settler = undefined;
    if (settler) settler.reject(error);
    else this.failure = error;
  }

  private detach(): void {
    this.stopFlow?.();
    this.stopFlow = undefined;
    this.clearTimers();
    this.signal?.removeEventListener('abort', this.onAbort);
    this.onChunk = undefined;
    this.onEnd = undefined;
  }

  /** Starts the idle clock, or starts it over: each chunk of a body restarts the one timer rather than making another. */
  private armIdle(): void {
    const timer = this.timers.idle;
    if (timer) timer.refresh();
    else this.arm('idle', this.limits.idleMs);
  }

  /** The timer carries the exchange and the deadline's name, so arming one makes no closure. */
  private arm(name: TimerName, ms: number): NodeJS.Timeout {
    this.disarm(name);
    const timer = setTimeout(Exchange.expire, ms, this, name);
    this.timers[name] = timer;
    return timer;
  }

  private static expire(this: void, exchange: Exchange, name: TimerName): void {
    exchange.timers[name] = undefined;
    exchange.fail(exchange.deadlineError(name));
  }

  /** What a passed deadline is reported as; a drain that ran out ends the exchange silently. */
  private deadlineError(name: TimerName): UpstreamTimeoutError | undefined {
    const { url, limits } = this;
    switch (name) {
      case 'connect':
        return new UpstreamTimeoutError(`The model server did not accept a connection within ${limits.connectMs} ms (connect timeout).`).withDetail(`upstream ${url}`);
      case 'firstByte':
        return new UpstreamTimeoutError(`The model server sent no response headers within ${limits.firstByteMs} ms (first-byte timeout).`).withDetail(`upstream ${url}`);
      case 'idle':
        return new UpstreamTimeoutError(`The model server sent nothing for ${limits.idleMs} ms (idle timeout).`).withDetail(`upstream ${url}`);
      case 'total':
        return new UpstreamTimeoutError(`The model server did not finish within ${limits.totalMs} ms (total timeout).`).withDetail(`upstream ${url}`);
      case 'drain':
        return undefined;
    }
  }

  private disarm(name: TimerName): void {
    const timer = this.timers[name];
    if (timer) {
      clearTimeout(timer);
      this.timers[name] = undefined;
    }
  }

  private clearTimers(): void {
    for (const name of TIMER_NAMES) this.disarm(name);
  }
}

function abortReason(signal: AbortLike): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

/**
 * The message of an upstream error body, whatever server wrote it:
 * OpenAI/llama.cpp `{error:{message}}`, Ollama `{error:"..."}`,
 * vLLM `{object:"error", message}`, FastAPI/TGI `{detail}` or `{message}`.
 */
export function upstreamErrorMessage(raw: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!isJsonObject(body)) return undefined;
  const { error, message, detail } = body;
  if (isJsonObject(error) && typeof error.message === 'string' && error.message) return error.message;
  if (typeof error === 'string' && error) return error;
  if (typeof message === 'string' && message) return message;
  if (typeof detail === 'string' && detail) return detail;
  if (Array.isArray(detail)) {
    // FastAPI validation errors: [{loc, msg, type}, ...]
    const parts = detail.map((entry) => (isJsonObject(entry) && typeof entry.msg === 'string' ? entry.msg : undefined)).filter((msg): msg is string => !!msg);
    if (parts.length) return parts.join('; ');
  }
  return undefined;
}

/** The `error.param` of an OpenAI-style error body, when it names a field. */
export function upstreamErrorParam(raw: string): string | undefined {
  try {
    const body: unknown = JSON.parse(raw);
    const param = isJsonObject(body) && isJsonObject(body.error) ? body.error.param : undefined;
    return typeof param === 'string' && param !== '' && param.length <= 256 ? param : undefined;
  } catch {
    return undefined;
  }
}
