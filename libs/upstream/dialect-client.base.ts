import { Observable } from 'rxjs';
import { Cancellation, type AbortLike } from '#core/protocol/cancellation.js';
import type { TimeoutConfig, UpstreamConfig } from '#config/gateway-config.js';
import type { ModelEvent, ModelRequest } from '#core/protocol/model-events.js';
import { UpstreamHttpError, UpstreamUnavailableError } from '#tool-sdk/errors.js';
import { HttpTransport, type UpstreamPoolStats } from './http-transport.js';
import type { InferOptions, ModelInfo, TokenizeRequest, UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import type { JsonObject } from '#tool-sdk/items.js';
import type { RelayBody, RelayCall, RelayingUpstream } from '#core/upstream/upstream-relay.interface.js';
import { toChatMessages, toChatTool } from './chat-request.mapper.js';
import { isJsonObject, numberOr, stringOr } from './wire-values.js';

/**
 * What both dialects share: the Observable that owns one HTTP exchange, the
 * model list and the readiness probe. A dialect only says how to run one
 * inference call.
 */
export abstract class DialectClient implements UpstreamClient, RelayingUpstream {
  abstract readonly dialect: 'responses' | 'chat';
  protected readonly transport: HttpTransport;

  constructor(
    protected readonly upstream: UpstreamConfig,
    protected readonly timeouts: TimeoutConfig,
  ) {
    this.transport = new HttpTransport(upstream, timeouts);
  }

  infer(request: ModelRequest, options: InferOptions = {}): Observable<ModelEvent> {
    return new Observable<ModelEvent>((subscriber) => {
      const cancel = new Cancellation();
      let settled = false;
      this.exchange(request, cancel, (event) => subscriber.next(event), options).then(
        () => {
          settled = true;
          subscriber.complete();
        },
        (error: unknown) => {
          settled = true;
          // After an unsubscribe the rejection is only the echo of our own abort.
          if (!cancel.aborted) subscriber.error(error);
        },
      );
      // A finished exchange has nothing left to cancel (see LoopService.run).
      return () => {
        if (!settled) cancel.abort();
      };
    });
  }

  async listModels(signal?: AbortSignal): Promise<ModelInfo[]> {
    const body = await this.transport.json({ method: 'GET', path: '/models', signal });
    if (!isJsonObject(body) || !Array.isArray(body.data)) {
      throw new UpstreamUnavailableError('The model server did not answer with a model list.', 'upstream_bad_response').withDetail(`upstream ${this.transport.displayUrl}/models`);
    }
    return body.data.filter(isJsonObject).map((model) => ({
      ...model,
      id: stringOr(model.id, ''),
      object: 'model' as const,
      created: numberOr(model.created, 0),
      owned_by: stringOr(model.owned_by, ''),
    }));
  }

  async probe(signal?: AbortSignal): Promise<void> {
    // A readiness check must answer within the connect and first-byte budgets,
    // not the long deadlines meant for generation.
    const { connectMs, firstByteMs } = this.timeouts;
    await this.transport.json({
      method: 'GET',
      path: '/models',
      signal,
      timeouts: { idleMs: firstByteMs, totalMs: connectMs + firstByteMs },
    });
  }

  /**
   * vLLM's chat form of `POST /tokenize` (`{model, messages, tools}`), the
   * same in both dialects: it applies the model's chat template, so the count
   * is what the model reads whichever endpoint then serves the turn.
   */
  async tokenize(request: TokenizeRequest, signal?: AbortSignal): Promise<number | null> {
    const payload: JsonObject = {
      model: request.model || this.upstream.defaultModel,
      messages: toChatMessages(request.instructions, request.input, this.upstream.chatToolOutputMedia),
    };
    if (request.tools.length > 0) payload.tools = request.tools.map(toChatTool);
    let body: unknown;
    try {
      body = await this.transport.json({ method: 'POST', path: '/tokenize', fromRoot: true, body: payload, signal });
    } catch (error) {
      // Servers without the route (SGLang, llama.cpp, proxies) answer 404 or 405: not a failure, just no tokenizer.
      if (error instanceof UpstreamHttpError && [404, 405, 501].includes(error.upstreamStatus)) return null;
      throw error;
    }
    if (!isJsonObject(body) || typeof body.count !== 'number' || !Number.isInteger(body.count) || body.count < 0) return null;
    return body.count;
  }

  /**
   * An OpenAI-compatible call passed through unchanged (`/chat/completions`,
   * `/completions`, `/embeddings`), whatever dialect the loop speaks: every
   * server the gateway supports serves these. The body is handed back unread,
   * so a stream is relayed chunk by chunk under the caller's flow gate.
   */
  relay(call: RelayCall): Promise<RelayBody> {
    return this.transport.open({
      method: 'POST',
      path: call.path,
      body: call.body,
      signal: call.signal,
      flow: call.flow,
      headers: call.headers,
      accept: call.stream ? 'text/event-stream' : 'application/json',
    });
  }

  /** Releases pooled sockets; call on shutdown. */
  close(): void {
    this.transport.close();
  }

  /** Upstream socket pool counts, for health checks and leak tests. */
  poolStats(): UpstreamPoolStats {
    return this.transport.poolStats();
  }

  /** One inference exchange, cancelled by `signal`. A dialect's own code; a subclass may read `signal` as an `AbortSignal`. */
  protected abstract run(request: ModelRequest, signal: AbortSignal, emit: (event: ModelEvent) => void, options: InferOptions): Promise<void>;

  /**
   * `run` under the Observable's cancellation. This makes the real
   * `AbortSignal` that `run` is promised; a dialect whose `run` hands the
   * signal to the transport alone (the built-in ones) extends
   * `TransportDialectClient`, which passes the cancellation itself and makes none.
   */
  protected exchange(request: ModelRequest, cancel: Cancellation, emit: (event: ModelEvent) => void, options: InferOptions): Promise<void> {
    return this.run(request, cancel.signal, emit, options);
  }
}

/**
 * A dialect whose `run` hands its signal to the transport alone, which takes
 * the cancellation itself: no `AbortSignal` is made (the built-in dialects).
 */
export abstract class TransportDialectClient extends DialectClient {
  protected abstract override run(request: ModelRequest, signal: AbortLike, emit: (event: ModelEvent) => void, options: InferOptions): Promise<void>;

  protected override exchange(request: ModelRequest, cancel: Cancellation, emit: (event: ModelEvent) => void, options: InferOptions): Promise<void> {
    return this.run(request, cancel, emit, options);
  }
}

/** A streamed request answered with JSON (server ignored `stream`, or a proxy answered): decode it as a whole. */
export function isJsonBody(contentType: string): boolean {
  return contentType.includes('json') && !contentType.includes('event-stream');
}
