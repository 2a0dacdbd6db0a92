import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { refusedRedirect } from './mcp-guarded.fetch.js';
import type { HostPolicy, RefusedDestinationError } from './mcp-host.policy.js';
import { loadMcpSdk, type McpSdk } from './mcp-sdk.js';

/** One message (a JSON body, an SSE event's data) may not grow past this: the server may be a tenant's. */
export const MAX_MCP_MESSAGE_CHARS = 32 * 1024 * 1024;

/** The SDK transport's reconnection defaults, for the GET stream and resumable POST streams. */
const RECONNECT = { maxRetries: 2, initialDelayMs: 1_000, maxDelayMs: 30_000, growFactor: 1.5 };

type RequestId = string | number;

/** A JSON-RPC answer as the server sent it: `result` or `error`, under the request's id. */
export interface JsonRpcAnswer {
  id: RequestId;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface McpHttpTransportOptions {
  url: URL;
  /** Sent with every request (the declaration's credentials, operator headers). */
  headers: Record<string, string>;
  /** Per scheme: request-declared servers get agents of their own (see McpConnectionPool). */
  agents: { http: http.Agent; https: https.Agent };
  /** The guarded lookup of a request-declared server, and the policy its redirects are checked against. */
  guard?: { lookup: LookupFunction; policy: HostPolicy; onRefusal(error: RefusedDestinationError): void };
  /** The largest message accepted (default `MAX_MCP_MESSAGE_CHARS`); a larger one fails its stream. */
  maxMessageChars?: number;
}

/** What the reader of one SSE body needs to know about it. */
interface StreamPlan {
  /** The GET stream reconnects whenever it ends; a POST stream only once it sent an event id. */
  reconnectable: boolean;
  /** Ids of the requests whose answers this stream carries (POST), to stop it on their cancellation. */
  ids: RequestId[];
  /** A resumed POST stream's answer is delivered under the id of the request it answers. */
  replayId?: RequestId;
  /** The standalone GET stream, the one server-initiated notifications arrive on. */
  standalone: boolean;
}

/** Refused before any bytes were read: the exchange was stopped or the transport closed. */
class Stopped extends Error {}

const isRequest = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId; method: string } => 'method' in m && 'id' in m && m.id !== undefined;
const isAnswer = (m: Record<string, unknown>): boolean => 'id' in m && ('result' in m || 'error' in m);

/**
 * The MCP Streamable HTTP client transport on `node:http`, for the gateway's
 * pooled connections. Same protocol as the SDK's `StreamableHTTPClientTransport`
 * (a POST per message answered with JSON or an SSE stream, the session and
 * protocol-version headers, the optional GET stream, resumption by event id,
 * DELETE to end a session), without the web-streams stack under it: the SDK's
 * transport reads every answer through `fetch`, a `Response`, a text-decoder
 * stream and an SSE parser stream, which made a tool round's two exchanges cost
 * more CPU than the model rounds around them. Here an answer is read as the
 * socket's own chunks into one SSE parser.
 *
 * Cancelling a request (the SDK sends `notifications/cancelled`) also ends the
 * HTTP exchange that carries it, quietly: a server that finishes the tool
 * anyway cannot deliver a result for an id the client has forgotten, which the
 * SDK would report as a transport error and the pool would retire the
 * connection for under every other caller.
 */
export class McpHttpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private session: string | undefined;
  private protocol: string | undefined;
  private started = false;
  private closed = false;
  /** Every exchange in flight, so `close` can end them all. */
  private readonly open = new Set<http.ClientRequest>();
  /** Per request id, how to end the POST that carries it. */
  private readonly carriers = new Map<RequestId, () => void>();
  /** The gateway's own requests (`request`) waiting for their answers, by id; their answers never reach `onmessage`. */
  private readonly awaited = new Map<RequestId, { resolve(answer: JsonRpcAnswer): void; reject(err: unknown): void }>();
  /** Ids of `request`s: strings, so that they never meet the SDK's numeric ids on the same session. */
  private ownIds = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** Whether the standalone GET stream is open now, and how many times one has ended. */
  private listening = false;
  private listenings = 0;
  private serverRetryMs: number | undefined;
  /** The SDK's error class for a refused exchange, as callers test for it; set by `start`. */
  private HttpError: McpSdk['StreamableHTTPError'] | undefined;
  /** The SDK, for the error a request still waiting when the transport closes fails with; set by `start`. */
  private sdk: McpSdk | undefined;
  private readonly headers: Record<string, string>;
  private readonly maxChars: number;
  /** Where every exchange goes, as request options: read from the URL once (see `exchange`). */
  private readonly endpoint: Pick<http.RequestOptions, 'hostname' | 'port' | 'path' | 'auth'>;

  constructor(private readonly options: McpHttpTransportOptions) {
    // Lower-cased once, so the protocol's own headers below replace a caller's of any spelling.
    this.headers = Object.fromEntries(Object.entries(options.headers).map(([name, value]) => [name.toLowerCase(), value]));
    this.maxChars = options.maxMessageChars ?? MAX_MCP_MESSAGE_CHARS;
    const { hostname, port, path, auth } = urlToHttpOptions(options.url);
    this.endpoint = { hostname, port, path, auth };
  }

  get sessionId(): string | undefined {
    return this.session;
  }

  /**
   * A number that stays the same for as long as the standalone GET stream
   * stays open, so anything the server would announce on it (a changed tool
   * list) has been heard; `undefined` while it is not open.
   */
  get notificationEpoch(): number | undefined {
    return this.listening ? this.listenings : undefined;
  }

  setProtocolVersion(version: string): void {
    this.protocol = version;
  }

  get protocolVersion(): string | undefined {
    return this.protocol;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('McpHttpTransport already started');
    this.started = true;
    // Already loaded when the pool is the caller; the SDK is never imported at boot (see mcp-sdk.ts).
    this.sdk = await loadMcpSdk();
    this.HttpError = this.sdk.StreamableHTTPError;
  }

  async send(message: JSONRPCMessage, options?: { resumptionToken?: string }): Promise<void> {
    try {
      if (options?.resumptionToken) {
        this.openStream(options.resumptionToken, false, isRequest(message) ? message.id : undefined).catch((err: Error) => this.onerror?.(err));
        return;
      }
      await this.post(message);
    } catch (err) {
      if (err instanceof Stopped) return;
      this.onerror?.(err as Error);
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopListening();
    clearTimeout(this.reconnectTimer);
    for (const request of this.open) request.destroy();
    this.open.clear();
    this.carriers.clear();
    // As the SDK fails the requests it still waits for when its transport closes.
    const waiting = [...this.awaited.values()];
    this.awaited.clear();
    for (const { reject } of waiting) reject(this.closedError());
    this.onclose?.();
  }

  /**
   * Sends one request whose answer the caller reads itself: resolved with
   * the server's answer (`result` or `error`, unchecked), never handed to
   * `onmessage`. The SDK's protocol layer, by which a session's other
   * messages still go, checks each incoming message against up to four
   * schemas and the result against the method's, and keeps a timer, an
   * abort listener and handlers per request: for a tool call, whose result
   * its caller checks anyway, that was 3.4 % of an MCP round's CPU profile
   * (bench/README.md, "An MCP round and a 100-tool request, this stop").
   *
   * `signal` stops it as the SDK stops a request: the exchange carrying it
   * ends quietly, the server is told (`notifications/cancelled`), and the
   * promise rejects with the signal's reason. Messages the server sends on
   * the request's stream before its answer (its own requests, notifications)
   * go to `onmessage` as ever.
   */
  request(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<JsonRpcAnswer> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.closed) return Promise.reject(this.closedError());
    const id = `switchyard-${++this.ownIds}`;
    return new Promise<JsonRpcAnswer>((resolve, reject) => {
      const done = () => {
        this.awaited.delete(id);
        signal.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        done();
        const reason: unknown = signal.reason;
        // `post` ends the exchange that carries the request when it sends this.
        const cancelled = {
          jsonrpc: '2.0' as const,
          method: 'notifications/cancelled',
          params: { requestId: id, reason: String(reason instanceof Error ? reason.message : reason) },
        };
        this.send(cancelled).catch(() => undefined);
        reject(reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.awaited.set(id, {
        resolve: (answer) => {
          done();
          resolve(answer);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      });
      this.send({ jsonrpc: '2.0', id, method, params }).catch((err: unknown) => this.awaited.get(id)?.reject(err));
    });
  }

  /** What a request fails with once the transport has closed: the SDK's own error for that, as its requests get. */
  private closedError(): Error {
    return this.sdk ? new this.sdk.McpError(this.sdk.ErrorCode.ConnectionClosed, 'Connection closed') : new Error('Connection closed');
  }

  /** Ends the session on the server (DELETE); a 405 means the server does not offer that. */
  async terminateSession(): Promise<void> {
    if (!this.session) return;
    try {
      const res = await this.exchange('DELETE', this.commonHeaders());
      res.resume();
      const status = res.statusCode ?? 0;
      if ((status < 200 || status >= 300) && status !== 405) throw this.httpError(status, `Failed to terminate session: ${res.statusMessage ?? ''}`);
      this.session = undefined;
    } catch (err) {
      if (err instanceof Stopped) return;
      this.onerror?.(err as Error);
      throw err;
    }
  }

  // --- one message --------------------------------------------------------------

  private async post(message: JSONRPCMessage): Promise<void> {
    if ('method' in message && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (id !== undefined) this.carriers.get(id)?.();
    }
    const ids = isRequest(message) ? [message.id] : [];
    const headers = this.commonHeaders();
    headers['content-type'] = 'application/json';
    headers.accept = 'application/json, text/event-stream';
    let res: http.IncomingMessage;
    try {
      res = await this.exchange('POST', headers, JSON.stringify(message), ids);
    } catch (err) {
      this.forget(ids);
      throw err;
    }
    const session = res.headers['mcp-session-id'];
    if (typeof session === 'string' && session) this.session = session;
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const text = await readText(res, this.maxChars).catch(() => null);
      this.forget(ids);
      throw this.httpError(status, `Error POSTing to endpoint: ${text}`);
    }
    if (status === 202 || ids.length === 0) {
      res.resume();
      this.forget(ids);
      // The server may offer a stream of its own messages once the session is initialised.
      if (status === 202 && 'method' in message && message.method === 'notifications/initialized') {
        this.openStream(undefined, true).catch((err: Error) => this.onerror?.(err));
      }
      return;
    }
    const type = mediaType(res.headers['content-type']);
    if (type === 'text/event-stream') {
      this.readStream(res, { reconnectable: false, ids, standalone: false });
      return;
    }
    if (type === 'application/json') {
      let data: unknown;
      try {
        data = JSON.parse(await readText(res, this.maxChars));
      } catch (err) {
        throw wasStopped(res) ? new Stopped('request cancelled') : err;
      } finally {
        this.forget(ids);
      }
      for (const m of Array.isArray(data) ? data : [data]) this.deliver(m);
      return;
    }
    res.destroy();
    this.forget(ids);
    throw this.httpError(-1, `Unexpected content type: ${String(res.headers['content-type'])}`);
  }

  /** The GET stream (server-initiated messages), or a resumed stream when `resumeFrom` is an event id. */
  private async openStream(resumeFrom: string | undefined, standalone: boolean, replayId?: RequestId): Promise<void> {
    const headers = this.commonHeaders();
    headers.accept = 'text/event-stream';
    if (resumeFrom) headers['last-event-id'] = resumeFrom;
    let res: http.IncomingMessage;
    try {
      res = await this.exchange('GET', headers);
    } catch (err) {
      if (err instanceof Stopped) return;
      throw err;
    }
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      res.resume();
      // 405: the server offers no GET stream, which the protocol allows.
      if (status === 405) return;
      throw this.httpError(status, `Failed to open SSE stream: ${res.statusMessage ?? ''}`);
    }
    if (standalone) this.listening = true;
    this.readStream(res, { reconnectable: true, ids: [], replayId, standalone }, resumeFrom);
  }

  private stopListening(): void {
    if (!this.listening) return;
    this.listening = false;
    this.listenings++;
  }

  // --- reading ------------------------------------------------------------------

  /** Reads one SSE body to its end; resumes it (see `StreamPlan`) if it ends before its answer. */
  private readStream(res: http.IncomingMessage, plan: StreamPlan, lastEventId?: string): void {
    let resumable = plan.reconnectable;
    let answered = false;
    let failed = false;
    const parser = createParser({
      maxBufferSize: this.maxChars,
      onEvent: (event: EventSourceMessage) => {
        if (event.id) {
          lastEventId = event.id;
          resumable = true;
        }
        if (!event.data || (event.event && event.event !== 'message')) return;
        let message: unknown;
        try {
          message = JSON.parse(event.data);
        } catch (err) {
          this.onerror?.(err as Error);
          return;
        }
        if (isJsonObject(message) && isAnswer(message)) {
          answered = true;
          if (plan.replayId !== undefined) message.id = plan.replayId;
        }
        this.deliver(message);
      },
      onRetry: (ms) => (this.serverRetryMs = ms),
      onError: (error) => {
        if (error.type !== 'max-buffer-size-exceeded') return;
        failed = true;
        res.destroy(new Error(`an SSE event exceeds ${this.maxChars} characters`));
      },
    });
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (!failed) parser.feed(chunk);
    });
    const settle = (error: Error | undefined): void => {
      this.forget(plan.ids);
      if (plan.standalone) this.stopListening();
      if (this.closed) return;
      if (error) this.onerror?.(new Error(`SSE stream disconnected: ${error.message}`));
      if (resumable && !answered) this.scheduleResume(lastEventId, plan.standalone, plan.replayId ?? plan.ids[0], 0);
    };
    let ended = false;
    const finish = (error: Error | undefined): void => {
      if (ended) return;
      ended = true;
      // Ended by a cancellation: not a failure, and nothing to resume.
      if (wasStopped(res)) return this.forget(plan.ids);
      settle(error);
    };
    res.once('end', () => finish(undefined));
    res.once('error', (err: Error) => finish(err));
    res.once('close', () => finish(res.complete ? undefined : new Error('the connection closed before the stream ended')));
  }

  private scheduleResume(lastEventId: string | undefined, standalone: boolean, replayId: RequestId | undefined, attempt: number): void {
    if (attempt >= RECONNECT.maxRetries) {
      this.onerror?.(new Error(`Maximum reconnection attempts (${RECONNECT.maxRetries}) exceeded.`));
      return;
    }
    const delay = this.serverRetryMs ?? Math.min(RECONNECT.initialDelayMs * RECONNECT.growFactor ** attempt, RECONNECT.maxDelayMs);
    this.reconnectTimer = setTimeout(() => {
      this.openStream(lastEventId, standalone, replayId).catch((err: Error) => {
        this.onerror?.(new Error(`Failed to reconnect SSE stream: ${err.message}`));
        this.scheduleResume(lastEventId, standalone, replayId, attempt + 1);
      });
    }, delay);
  }

  private deliver(message: unknown): void {
    // The protocol layer validates each message against its method's schema; here only the envelope.
    if (!isJsonObject(message) || message.jsonrpc !== '2.0') {
      this.onerror?.(new Error(`MCP server sent a message that is not JSON-RPC 2.0: ${preview(message)}`));
      return;
    }
    const waiting = isAnswer(message) ? this.awaited.get(message.id as RequestId) : undefined;
    if (waiting) return waiting.resolve(message as unknown as JsonRpcAnswer);
    this.onmessage?.(message as unknown as JSONRPCMessage);
  }

  // --- HTTP -----------------------------------------------------------------------

  private commonHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    if (this.session) headers['mcp-session-id'] = this.session;
    if (this.protocol) headers['mcp-protocol-version'] = this.protocol;
    return Object.assign(headers, this.headers);
  }

  /**
   * One HTTP exchange, resolved with the response once its headers arrive. An
   * exchange carrying request `ids` is ended by `notifications/cancelled` for
   * them: before the headers the call rejects with `Stopped` (the caller
   * returns quietly), afterwards the body just ends.
   */
  private exchange(method: string, headers: Record<string, string>, body?: string, ids: RequestId[] = [], retried = false): Promise<http.IncomingMessage> {
    if (this.closed) return Promise.reject(new Stopped('transport closed'));
    const { url, agents, guard } = this.options;
    const secure = url.protocol === 'https:';
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    // A literal of the endpoint's fields rather than the URL: Node turns a URL into options with a
    // spread of a null-prototype object, which V8 keeps as a dictionary, and every read of the
    // request's options in ClientRequest and the agent then took a slow lookup. Node copies these
    // member by member twice more per exchange, so no protocol: the agent's (chosen by scheme) is it.
    const { hostname, port, path, auth } = this.endpoint;
    const agent = secure ? agents.https : agents.http;
    const options: http.RequestOptions = guard
      ? { hostname, port, path, auth, method, headers, agent, lookup: guard.lookup }
      : { hostname, port, path, auth, method, headers, agent };
    return new Promise((resolve, reject) => {
      let response: http.IncomingMessage | undefined;
      let cancelled = false;
      const request = (secure ? https : http).request(options, (res) => {
        response = res;
        // Redirects are never followed; one towards a refused destination fails outright.
        const refusal = guard && refusedRedirect(res, url, guard.policy, guard.onRefusal);
        if (refusal) return reject(refusal);
        resolve(res);
      });
      const stop = (): void => {
        cancelled = true;
        // Marked first: the destroy below surfaces as an error event the readers must not report.
        if (response) stopped.add(response);
        request.destroy();
        reject(new Stopped('request cancelled'));
      };
      for (const id of ids) this.carriers.set(id, stop);
      this.open.add(request);
      request.once('close', () => this.open.delete(request));
      request.on('error', (err: NodeJS.ErrnoException) => {
        if (this.closed || cancelled) return reject(new Stopped('transport closed'));
        // A kept-alive socket the server had already closed (it restarted, or its idle
        // timeout won the race): the request never reached it, so it goes once more on a new socket.
        if (request.reusedSocket && !response && !retried && err.code === 'ECONNRESET') {
          return resolve(this.exchange(method, headers, body, ids, true));
        }
        reject(err);
      });
      request.end(body);
    });
  }

  /** An HTTP status or content type the protocol does not allow, as the SDK's own transport reports it. */
  private httpError(status: number, message: string): Error {
    if (!this.HttpError) throw new Error('McpHttpTransport used before start()');
    return new this.HttpError(status, message);
  }

  private forget(ids: RequestId[]): void {
    for (const id of ids) this.carriers.delete(id);
  }
}

/** Responses whose exchange a cancellation ended: their readers stay quiet. */
const stopped = new WeakSet<http.IncomingMessage>();
const wasStopped = (res: http.IncomingMessage): boolean => stopped.has(res);

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `type/subtype` of a content-type header, lower-cased, without parameters. */
function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0].trim().toLowerCase();
}

/** A whole body as text, refused past `maxChars`. */
function readText(res: http.IncomingMessage, maxChars: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > maxChars) res.destroy(new Error(`an MCP answer exceeds ${maxChars} characters`));
    });
    res.once('end', () => resolve(text));
    res.once('error', reject);
  });
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
