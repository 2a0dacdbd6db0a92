import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatBody, chatFrames } from './chat-dialect.js';
import { completionBody, completionFrames, completionPromptAsChat } from './completions-dialect.js';
import { BadRequestError, focusOf, fromChatRequest, fromResponsesRequest, type Conversation, type ConversationFocus } from './conversation.js';
import { EmbeddingRequestError, embeddingsBody } from './embeddings.js';
import { DirectiveError, parseDirectives, parseFaultText, type Directives, type FaultSpec } from './directives.js';
import { deltaCount, planTurn, promptTokens, tokenId } from './model-behaviour.js';
import { responsesBody, responsesFrames, type DialectInput } from './responses-dialect.js';
import type { SseFrame } from './wire-format.js';

export type { FaultSpec } from './directives.js';

export interface SimulatedUpstreamOptions {
  /** Model id listed by `/v1/models`. Default `switchyard-sim`. */
  model?: string;
  /** Emit a short reasoning item before every answer. */
  reasoning?: boolean;
  /** Wait before the first delta of a stream (and before a non-streamed reply). */
  ttftMs?: number;
  /** Wait before every later delta. */
  tokenDelayMs?: number;
  /** Wait before answering an `/v1/embeddings` request (a real server's compute time): callers' requests then overlap as they would there. */
  embeddingDelayMs?: number;
  /** Characters per streamed delta; default 4, roughly one real token. */
  chunkChars?: number;
  /** Fault applied to every inference request (`[[fault ...]]` syntax or an object); a prompt's own fault wins. */
  fault?: FaultSpec | string;
  /**
   * Prefix each `/v1/responses` SSE event with an `event:` line. Off by default, matching the
   * recorded gemma traffic; recent vLLM sources write the line, so gateways must accept both.
   */
  sseEventLines?: boolean;
  /** Context length reported by `/v1/models` and used for the default `max_output_tokens`. */
  maxModelLen?: number;
  /** Serve vLLM's `POST /tokenize` (default true); false answers 404 there, as SGLang-style servers without it do. */
  tokenize?: boolean;
}

export interface SimulatorStats {
  /** Inference requests received (`/v1/responses`, `/v1/chat/completions`), valid or not. */
  requests: number;
  /** Inference requests still being answered. */
  active: number;
  /** Inference requests whose reply was written in full (error replies included). */
  completed: number;
  /** Inference requests whose client went away before the reply was written in full. */
  aborted: number;
  /** Inference requests that had a fault applied. */
  faulted: number;
}

export interface RecordedRequest {
  path: string;
  /** Parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
  /** The request's headers as received (lower-cased names), to check what a gateway forwards (forwarded headers, trace context, authorization). */
  headers: Record<string, string | string[] | undefined>;
  receivedAt: number;
}

export interface SimulatorEvents {
  request: [RecordedRequest];
  /** An `/v1/embeddings` request, once its body is read (`embeddingsActive` counts it from its arrival to its reply's end). */
  embedding: [RecordedRequest];
  aborted: [RecordedRequest];
  completed: [RecordedRequest & { status: number }];
}

const REQUEST_LOG_LIMIT = 200;
const BODY_LIMIT_BYTES = 64 * 1024 * 1024;
// Events are coalesced into writes of about this size when nothing (delay, fault) separates them.
const FLUSH_BYTES = 16 * 1024;
const DEFAULT_MODEL = 'switchyard-sim';
const DEFAULT_MAX_MODEL_LEN = 32_768;
const MALFORMED_LINE = 'data: {"type": "response.output_text.delta", "delta": <<not json: simulated fault>>\n\n';

const ERROR_TYPES: Record<number, string> = {
  400: 'BadRequestError',
  401: 'AuthenticationError',
  403: 'PermissionDeniedError',
  404: 'NotFoundError',
  408: 'RequestTimeoutError',
  409: 'ConflictError',
  413: 'RequestEntityTooLargeError',
  422: 'UnprocessableEntityError',
  429: 'RateLimitError',
  500: 'InternalServerError',
  502: 'BadGatewayError',
  503: 'ServiceUnavailableError',
  504: 'GatewayTimeoutError',
};

type Dialect = 'responses' | 'chat' | 'completions';

const ROUTES: Record<string, { method: string; dialect?: Dialect }> = {
  '/v1/responses': { method: 'POST', dialect: 'responses' },
  '/v1/chat/completions': { method: 'POST', dialect: 'chat' },
  '/v1/completions': { method: 'POST', dialect: 'completions' },
  '/v1/models': { method: 'GET' },
  // vLLM serves its tokenizer at the server root, beside `/v1`, not under it.
  '/tokenize': { method: 'POST' },
  '/v1/embeddings': { method: 'POST' },
  '/health': { method: 'GET' },
};

interface InFlight {
  readonly controller: AbortController;
  /** Settles once the response's connection has closed and the counters are updated. */
  readonly settled: Promise<void>;
  readonly record: RecordedRequest;
  /** The simulator itself cut the connection (a fault), so it is not a client abort. */
  deliberate: boolean;
}

interface Latency {
  ttftMs: number;
  tokenDelayMs: number;
}

/**
 * A deterministic, OpenAI-compatible stand-in for a vLLM server, for tests, demos and benchmarks.
 * Plain `node:http` so that it costs next to nothing under load. What the "model" answers is driven
 * by the conversation and by `[[...]]` directives in the prompt (see README.md).
 */
export class SimulatedUpstream extends EventEmitter<SimulatorEvents> {
  /** The last 200 inference request bodies, oldest first. */
  readonly requests: RecordedRequest[] = [];
  /** The last 200 `/tokenize` request bodies, oldest first (kept apart: they are not inference). */
  readonly tokenizeRequests: RecordedRequest[] = [];
  /** The last 200 `/v1/embeddings` request bodies, oldest first. */
  readonly embeddingRequests: RecordedRequest[] = [];

  private readonly server: Server;
  private readonly model: string;
  private readonly options: Required<Omit<SimulatedUpstreamOptions, 'fault' | 'model'>>;
  private fault: FaultSpec | undefined;
  private faultUsesLeft = Infinity;
  private readonly directiveFaultUses = new Map<string, number>();
  private readonly counters: SimulatorStats = { requests: 0, active: 0, completed: 0, aborted: 0, faulted: 0 };
  private readonly inFlight = new Set<InFlight>();
  private embeddingsInFlight = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly startedAt = Math.floor(Date.now() / 1000);
  private closing = false;
  private address: { port: number; url: string } | undefined;

  constructor(options: SimulatedUpstreamOptions = {}) {
    super();
    this.model = options.model ?? DEFAULT_MODEL;
    this.options = {
      reasoning: options.reasoning ?? false,
      ttftMs: nonNegative(options.ttftMs, 'ttftMs') ?? 0,
      tokenDelayMs: nonNegative(options.tokenDelayMs, 'tokenDelayMs') ?? 0,
      embeddingDelayMs: nonNegative(options.embeddingDelayMs, 'embeddingDelayMs') ?? 0,
      chunkChars: Math.max(1, nonNegative(options.chunkChars, 'chunkChars') ?? 4),
      sseEventLines: options.sseEventLines ?? false,
      maxModelLen: options.maxModelLen ?? DEFAULT_MAX_MODEL_LEN,
      tokenize: options.tokenize ?? true,
    };
    this.setFault(options.fault);
    this.server = createServer({ keepAlive: true, noDelay: true }, (req, res) => {
      this.route(req, res).catch((error: unknown) => this.fail(res, error));
    });
  }

  /** Snapshot of the counters. */
  get stats(): Readonly<SimulatorStats> {
    return { ...this.counters };
  }

  /**
   * `/v1/embeddings` requests still being answered, kept apart from `stats` (they are not inference):
   * how many a client has in flight at once, as a server sees it (a gateway's background batch lines).
   */
  get embeddingsActive(): number {
    return this.embeddingsInFlight;
  }

  /** Base URL including `/v1`, once listening. */
  get url(): string | undefined {
    return this.address?.url;
  }

  /**
   * Until the returned function is called, every stream waits before its
   * first delta. Tests that need many streams open at once use it instead of
   * a delay long enough to be sure, which no delay is on a busy machine.
   */
  holdFirstTokens(): () => void {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    this.held = held;
    return () => {
      if (this.held === held) this.held = undefined;
      release();
    };
  }

  /** Replaces the fault applied to every request; `undefined` clears it. `times` counts from now. */
  setFault(fault: FaultSpec | string | undefined): void {
    this.fault = typeof fault === 'string' ? (fault.trim() === '' ? undefined : parseFaultText(fault)) : fault;
    this.faultUsesLeft = this.fault?.times ?? Infinity;
  }

  async listen(port = 0, host = '127.0.0.1'): Promise<{ port: number; url: string }> {
    if (this.address) throw new Error('SimulatedUpstream is already listening');
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const actualPort = (this.server.address() as AddressInfo).port;
    const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    this.address = { port: actualPort, url: `http://${urlHost}:${actualPort}/v1` };
    return this.address;
  }

  /** Stops listening, cuts every open connection and cancels every pending timer. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const pending = [...this.inFlight];
    for (const request of pending) request.controller.abort(new Error('simulator closing'));
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (this.server.listening) {
      await new Promise<void>((resolve) => {
        this.server.close(() => resolve());
        this.server.closeAllConnections();
      });
    }
    // The server can report closed before each response's own 'close' has run; wait for those too
    // so that `stats` is final when this resolves.
    await Promise.all(pending.map((request) => request.settled));
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('x-switchyard-simulator', 'true');
    const path = new URL(req.url ?? '/', 'http://simulator').pathname.replace(/\/+$/, '') || '/';
    const route = ROUTES[path];
    if (!route) return sendJson(res, 404, { detail: 'Not Found' });
    if (req.method !== route.method) return sendJson(res, 405, { detail: 'Method Not Allowed' });
    if (route.dialect) return this.infer(req, res, path, route.dialect);
    if (path === '/tokenize') return this.options.tokenize ? this.tokenize(req, res) : sendJson(res, 404, { detail: 'Not Found' });
    if (path === '/v1/embeddings') return this.embed(req, res);
    if (path === '/health') {
      res.writeHead(200, { 'content-length': 0 });
      res.end();
      return;
    }
    sendJson(res, 200, {
      object: 'list',
      data: [
        {
          id: this.model,
          object: 'model',
          created: this.startedAt,
          owned_by: 'switchyard-simulator',
          root: this.model,
          parent: null,
          max_model_len: this.options.maxModelLen,
          permission: [],
          simulated: true,
          description: 'Switchyard SIMULATED upstream: a deterministic stand-in for vLLM, not a real model.',
        },
      ],
    });
  }

  /** `/v1/embeddings` (see embeddings.ts); recorded in `embeddingRequests`, not counted as inference. */
  private async embed(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.embeddingsInFlight++;
    res.on('close', () => this.embeddingsInFlight--);
    const parsed = await readJsonBody(req, res);
    if (!parsed) return;
    const { body } = parsed;
    const record: RecordedRequest = { path: '/v1/embeddings', body, headers: { ...req.headers }, receivedAt: Date.now() };
    this.embeddingRequests.push(record);
    if (this.embeddingRequests.length > REQUEST_LOG_LIMIT) this.embeddingRequests.shift();
    this.emit('embedding', record);
    if (this.options.embeddingDelayMs > 0) {
      const gone = new AbortController();
      res.on('close', () => gone.abort(new Error('connection closed')));
      try {
        await this.sleep(this.options.embeddingDelayMs, gone.signal);
      } catch {
        return;
      }
    }
    try {
      sendJson(res, 200, embeddingsBody(body, this.model));
    } catch (error) {
      if (error instanceof EmbeddingRequestError) return sendError(res, 400, error.message, error.param);
      throw error;
    }
  }

  private async infer(req: IncomingMessage, res: ServerResponse, path: string, dialect: Dialect): Promise<void> {
    const record: RecordedRequest = { path, body: undefined, headers: { ...req.headers }, receivedAt: Date.now() };
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const flight: InFlight = { controller: new AbortController(), settled, record, deliberate: false };
    this.counters.requests++;
    this.counters.active++;
    this.inFlight.add(flight);
    res.on('close', () => {
      this.counters.active--;
      this.inFlight.delete(flight);
      if (res.writableFinished) {
        this.counters.completed++;
        this.emit('completed', { ...record, status: res.statusCode });
      } else if (!flight.deliberate && !this.closing) {
        this.counters.aborted++;
        this.emit('aborted', record);
      }
      flight.controller.abort(new Error('connection closed'));
      settle();
    });
    const signal = flight.controller.signal;

    const raw = await readBody(req, signal);
    if (raw === undefined) return sendError(res, 413, `Request body exceeds ${BODY_LIMIT_BYTES} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      record.body = raw;
      this.remember(record);
      return sendError(res, 400, 'Request body is not valid JSON');
    }
    record.body = body;
    this.remember(record);

    let conversation: Conversation;
    let focus: ConversationFocus;
    let directives: Directives;
    try {
      conversation = this.conversationFor(body, dialect);
      focus = focusOf(conversation);
      directives = parseDirectives(focus.prompt);
    } catch (error) {
      if (error instanceof BadRequestError) return sendError(res, 400, error.message, error.param);
      if (error instanceof DirectiveError) return sendError(res, 400, `Invalid simulator directive: ${error.message}`, 'input');
      throw error;
    }
    const request = body as Record<string, unknown>;
    const fault = this.faultFor(directives) ?? {};
    const latency: Latency = {
      ttftMs: directives.delay?.ttftMs ?? this.options.ttftMs,
      tokenDelayMs: directives.delay?.tokenDelayMs ?? this.options.tokenDelayMs,
    };

    try {
      await this.sleep(fault.stall ?? 0, signal);
      if (fault.status !== undefined) {
        const headers: Record<string, string> = {};
        const retryAfter = fault.retryAfter ?? (fault.status === 429 ? 1 : undefined);
        if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
        return sendError(res, fault.status, fault.message ?? `Simulated upstream failure (HTTP ${fault.status})`, null, headers);
      }
      const plan = planTurn(conversation, focus, directives, { reasoning: this.options.reasoning });
      const overflow = contextOverflow(request, dialect, plan.usage.inputTokens, this.options.maxModelLen);
      if (overflow) return sendError(res, 400, overflow.message, overflow.param);
      const input: DialectInput = {
        body: request,
        plan,
        model: request.model as string,
        chunkChars: this.options.chunkChars,
        maxModelLen: this.options.maxModelLen,
      };
      if (request.stream === true) {
        const usage = includeUsage(request.stream_options);
        const frames = dialect === 'responses' ? responsesFrames(input) : dialect === 'chat' ? chatFrames(input, usage) : completionFrames(input, usage);
        await this.writeStream(res, frames, latency, fault, flight, dialect === 'responses' && this.options.sseEventLines);
      } else {
        const reply = dialect === 'responses' ? responsesBody(input) : dialect === 'chat' ? chatBody(input) : completionBody(input);
        const deltas = deltaCount(plan, this.options.chunkChars);
        await this.sleep(latency.ttftMs + latency.tokenDelayMs * Math.max(0, deltas - 1) + (fault.stallAfter?.ms ?? 0), signal);
        this.writeWhole(res, JSON.stringify(reply), fault, flight);
      }
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
  }

  /**
   * vLLM's `POST /tokenize`: the chat form (`messages`, `tools`,
   * `add_generation_prompt`...) counts the prompt as the chat template
   * renders it; the completion form (`prompt`) counts plain text. The answer
   * is `{count, max_model_len, tokens, token_strs?}`, `count` equal to the
   * `input_tokens` an inference call with the same messages reports.
   */
  private async tokenize(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = await readJsonBody(req, res);
    if (!parsed) return;
    const { body } = parsed;
    const record: RecordedRequest = { path: '/tokenize', body, headers: { ...req.headers }, receivedAt: Date.now() };
    this.tokenizeRequests.push(record);
    if (this.tokenizeRequests.length > REQUEST_LOG_LIMIT) this.tokenizeRequests.shift();
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return sendError(res, 400, 'Request body must be a JSON object');
    const request = body as Record<string, unknown>;
    if (request.model !== undefined && request.model !== null && request.model !== this.model) {
      return sendError(res, 404, `The model \`${String(request.model)}\` does not exist.`, 'model');
    }
    let tokens: string[];
    try {
      if (Array.isArray(request.messages)) tokens = promptTokens(fromChatRequest(request));
      else if (typeof request.prompt === 'string') tokens = request.prompt.match(/\S+/g) ?? [];
      else return sendError(res, 400, 'Field required: `messages` (chat) or `prompt` (completion)', 'messages');
    } catch (error) {
      if (error instanceof BadRequestError) return sendError(res, 400, error.message, error.param);
      throw error;
    }
    const answer: Record<string, unknown> = { count: tokens.length, max_model_len: this.options.maxModelLen, tokens: tokens.map(tokenId) };
    if (request.return_token_strs === true) answer.token_strs = tokens;
    sendJson(res, 200, answer);
  }

  private conversationFor(body: unknown, dialect: Dialect): Conversation {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new BadRequestError('Request body must be a JSON object');
    }
    const request = body as Record<string, unknown>;
    if (typeof request.model !== 'string' || request.model === '') {
      throw new BadRequestError('Field required: `model` (a non-empty string)', 'model');
    }
    if (dialect === 'responses') {
      if (request.input === undefined || request.input === null) throw new BadRequestError('Field required: `input`', 'input');
      return fromResponsesRequest(request);
    }
    if (dialect === 'completions') {
      const prompt = request.prompt;
      if (typeof prompt !== 'string' && !(Array.isArray(prompt) && prompt.length > 0 && prompt.every((p) => typeof p === 'string'))) {
        throw new BadRequestError('Field required: `prompt` (a string or a list of strings)', 'prompt');
      }
      return fromChatRequest(completionPromptAsChat(request));
    }
    if (request.messages === undefined || request.messages === null) {
      throw new BadRequestError('Field required: `messages`', 'messages');
    }
    return fromChatRequest(request);
  }

  /** A prompt's own fault replaces the instance-wide one; `times` limits either. */
  private faultFor(directives: Directives): FaultSpec | undefined {
    if (directives.fault && directives.faultKey !== undefined) {
      const { times } = directives.fault;
      if (times !== undefined) {
        const used = this.directiveFaultUses.get(directives.faultKey) ?? 0;
        if (used >= times) return undefined;
        if (this.directiveFaultUses.size > 10_000) this.directiveFaultUses.clear();
        this.directiveFaultUses.set(directives.faultKey, used + 1);
      }
      this.counters.faulted++;
      return directives.fault;
    }
    if (!this.fault || this.faultUsesLeft <= 0) return undefined;
    this.faultUsesLeft--;
    this.counters.faulted++;
    return this.fault;
  }

  private writeWhole(res: ServerResponse, json: string, fault: FaultSpec, flight: InFlight): void {
    if (fault.resetAfter !== undefined) {
      flight.deliberate = true;
      res.destroy();
      return;
    }
    if (fault.truncate) {
      // No content-length: the reply is a well-formed HTTP message whose JSON simply stops.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(json.slice(0, Math.floor(json.length / 2)));
      return;
    }
    if (fault.malformedAfter !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object": <<not json: simulated fault>>');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
    res.end(json);
  }

  private async writeStream(res: ServerResponse, frames: Iterable<SseFrame>, latency: Latency, fault: FaultSpec, flight: InFlight, eventLines: boolean): Promise<void> {
    const signal = flight.controller.signal;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.flushHeaders();
    let buffer = '';
    let written = 0;
    let tokens = 0;
    let lastWrite: Promise<void> = Promise.resolve();
    const flush = async () => {
      if (buffer === '') return;
      const chunk = buffer;
      buffer = '';
      let accepted = true;
      lastWrite = new Promise((resolve) => {
        accepted = res.write(chunk, () => resolve());
      });
      if (!accepted) await drained(res, signal);
    };
    /** Faults that fire "after N events"; false when the stream must stop here. */
    const checkpoint = async (): Promise<boolean> => {
      if (fault.resetAfter === written) {
        await flush();
        // Destroying a socket discards what it has not sent yet: let the N events reach the wire first.
        await Promise.race([lastWrite, new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))]);
        flight.deliberate = true;
        res.destroy();
        return false;
      }
      if (fault.stallAfter?.events === written) {
        await flush();
        await this.sleep(fault.stallAfter.ms, signal);
      }
      if (fault.malformedAfter === written) buffer += MALFORMED_LINE;
      return true;
    };

    const hasPointFaults = fault.resetAfter !== undefined || fault.stallAfter !== undefined || fault.malformedAfter !== undefined;
    for (const item of frames) {
      if (signal.aborted || (hasPointFaults && !(await checkpoint()))) return;
      if (item.terminal && fault.truncate) break;
      if (item.token) {
        if (tokens === 0 && this.held) {
          await flush();
          await Promise.race([this.held, new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))]);
          if (signal.aborted) return;
        }
        const wait = tokens++ === 0 ? latency.ttftMs : latency.tokenDelayMs;
        if (wait > 0) {
          await flush();
          await this.sleep(wait, signal);
        }
      }
      buffer += eventLines && item.event ? `event: ${item.event}\ndata: ${item.data}\n\n` : `data: ${item.data}\n\n`;
      written++;
      if (buffer.length >= FLUSH_BYTES) await flush();
    }
    if (signal.aborted || (hasPointFaults && !fault.truncate && !(await checkpoint()))) return;
    await flush();
    res.end();
  }

  private held?: Promise<void>;

  private remember(record: RecordedRequest): void {
    this.requests.push(record);
    if (this.requests.length > REQUEST_LOG_LIMIT) this.requests.splice(0, this.requests.length - REQUEST_LOG_LIMIT);
    this.emit('request', record);
  }

  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        this.timers.delete(timer);
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      this.timers.add(timer);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private fail(res: ServerResponse, error: unknown): void {
    // A client that hung up mid-upload surfaces here as a read error: nothing left to answer.
    if (res.headersSent || res.destroyed || res.socket?.destroyed) {
      res.destroy();
      return;
    }
    sendError(res, 500, `Simulator error: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  const json = JSON.stringify(payload);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

/** vLLM's error envelope. */
function sendError(res: ServerResponse, status: number, message: string, param: string | null = null, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { message, type: ERROR_TYPES[status] ?? 'Error', param, code: status } }, headers);
}

/** The body parsed as JSON; undefined once its 413 or 400 has been sent. */
async function readJsonBody(req: IncomingMessage, res: ServerResponse): Promise<{ body: unknown } | undefined> {
  const raw = await readBody(req, new AbortController().signal);
  if (raw === undefined) return void sendError(res, 413, `Request body exceeds ${BODY_LIMIT_BYTES} bytes`);
  try {
    return { body: JSON.parse(raw) as unknown };
  } catch {
    return void sendError(res, 400, 'Request body is not valid JSON');
  }
}

/** The body as text, or undefined when it is larger than the limit. */
async function readBody(req: IncomingMessage, signal: AbortSignal): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    if (signal.aborted) break;
    size += chunk.length;
    if (size > BODY_LIMIT_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

function includeUsage(streamOptions: unknown): boolean {
  return typeof streamOptions === 'object' && streamOptions !== null && (streamOptions as Record<string, unknown>).include_usage === true;
}

function nonNegative(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`SimulatedUpstream option ${name} must be a non-negative number`);
  return value;
}

/**
 * vLLM refuses a request whose prompt plus requested output budget exceeds
 * `max_model_len` (HTTP 400, before generating), rather than shortening the
 * budget itself: a gateway has to fit the budget to the context.
 */
function contextOverflow(request: Record<string, unknown>, dialect: Dialect, inputTokens: number, maxModelLen: number): { message: string; param: string | null } | null {
  if (inputTokens >= maxModelLen) {
    return {
      message: `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${inputTokens} input tokens. Please reduce the length of the input messages.`,
      param: null,
    };
  }
  const field = dialect === 'responses' ? 'max_output_tokens' : request.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const budget = request[field];
  if (typeof budget !== 'number' || budget <= maxModelLen - inputTokens) return null;
  return {
    message: `'max_tokens' or 'max_completion_tokens' is too large: ${budget}. This model's maximum context length is ${maxModelLen} tokens and your request has ${inputTokens} input tokens (${budget} > ${maxModelLen} - ${inputTokens}).`,
    param: field,
  };
}
