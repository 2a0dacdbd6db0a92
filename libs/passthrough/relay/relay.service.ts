import type { IncomingMessage } from 'node:http';
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Response } from 'express';
import { GATEWAY_CONFIG, type GatewayConfig } from '#config/gateway-config.js';
import { ContextLengthExceededError, UpstreamHttpError, UpstreamUnavailableError } from '#tool-sdk/errors.js';
import { REQUEST_LIMITER, type RequestLease, type RequestLimiter } from '#core/loop/request-limiter.interface.js';
import { FlowGate } from '#core/protocol/flow-gate.js';
import { ModelContextService, clampOutputBudget, usefulOutputFloor } from '#core/loop/model-context.service.js';
import type { Usage } from '#tool-sdk/items.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import { RELAY_OBSERVER, canRelay, type RelayBody, type RelayObserver, type RelayTrace, type RelayingUpstream } from '#core/upstream/upstream-relay.interface.js';
import { toErrorEnvelope } from '#edge/errors/error-envelope.js';
import { onClientGone } from '#edge/response/client-disconnect.js';
import { sendJson } from '#edge/response/send-json.js';
import { DEFAULT_UPSTREAM_CLIENT } from '#upstream/upstream.module.js';
import { clientAskedUsage, type RelayRequest } from './relay-request.js';
import { UsageSniffer, usageOf } from './usage-sniffer.js';

/** Who a relayed call is for: the owner its limits count against, and the headers the operator forwards. */
export interface RelayCaller {
  owner: string | null;
  headers?: Readonly<Record<string, string>>;
  /** Where the usage counts (`switchyard_tokens_total`, `GET /v1/usage`): `batch` for batch work, else the route's own. */
  surface?: string;
  /** The HTTP request the call answers, for the per-request observers (its log line and metrics). */
  served?: IncomingMessage;
}

/** The usage surface of each route. */
const SURFACE: Record<RelayRequest['path'], string> = { '/chat/completions': 'chat_completions', '/completions': 'completions', '/embeddings': 'embeddings' };

/** The field OpenAI blames for a context overflow on each route (`param` of its `context_length_exceeded`). */
const PROMPT_FIELD: Record<RelayRequest['path'], string> = { '/chat/completions': 'messages', '/completions': 'prompt', '/embeddings': 'input' };

/** The output budget field a body sets (`max_completion_tokens` wins, as servers read it), or null. */
function budgetField(body: RelayRequest['body']): 'max_completion_tokens' | 'max_tokens' | null {
  return typeof body.max_completion_tokens === 'number' ? 'max_completion_tokens' : typeof body.max_tokens === 'number' ? 'max_tokens' : null;
}

/**
 * The request again with the budget the server's refusal says fits: it
 * counted the prompt exactly (`input_tokens` of its message), where the
 * gateway's estimate ran high and left the budget as asked. Null when the
 * refusal is not about the budget, or what is left is below the useful floor
 * (then the refusal stands).
 */
export function refittedAfterRefusal(request: RelayRequest, err: unknown): RelayRequest | null {
  if (!(err instanceof ContextLengthExceededError) || err.overflow.outputTokens === null) return null;
  const field = budgetField(request.body);
  if (!field) return null;
  const asked = request.body[field] as number;
  const { contextLength, inputTokens } = err.overflow;
  const fits = contextLength - inputTokens;
  if (fits >= asked || fits < usefulOutputFloor(asked, contextLength)) return null;
  return { ...request, body: { ...request.body, [field]: fits } };
}

/**
 * A context overflow as OpenAI answers it on this route (`param` the prompt's
 * field: `messages` on chat, not the Responses API's `input`); the server's
 * status and words are kept. Any other error goes on as it is.
 */
export function asRouteError(path: RelayRequest['path'], err: unknown): unknown {
  if (!(err instanceof ContextLengthExceededError)) return err;
  const routed = new UpstreamHttpError(err.message, err.upstreamStatus, undefined, { code: 'context_length_exceeded', param: PROMPT_FIELD[path] });
  return err.detail ? routed.withDetail(err.detail) : routed;
}

/**
 * Passes OpenAI-compatible calls to the upstream pool: the owner's limits
 * are taken first (the same limiter the loop uses, so pass-through and
 * Responses traffic share one budget; the call's estimated cost is reserved
 * and settled to its `usage`), the pool picks the server (by model,
 * prefix affinity, load), and the answer is relayed as it arrives. A stream
 * is never buffered: each upstream chunk is written on at once, and while the
 * client's socket is full the upstream socket is not read (TCP backpressure
 * reaches the model server).
 */
@Injectable()
export class RelayService {
  constructor(
    @Inject(UPSTREAM_CLIENT) private readonly upstream: UpstreamClient,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Optional() @Inject(DEFAULT_UPSTREAM_CLIENT) private readonly configured?: UpstreamClient,
    @Optional() @Inject(REQUEST_LIMITER) private readonly limiter?: RequestLimiter | null,
    @Optional() @Inject(RELAY_OBSERVER) private readonly observer?: RelayObserver,
    @Optional() private readonly contexts?: ModelContextService,
  ) {}

  get defaultModel(): string | undefined {
    return this.config.upstream.defaultModel;
  }

  /**
   * A host's own `UPSTREAM_CLIENT` (a wrapper adding headers) may not relay;
   * then the configured client, which always can, serves these routes.
   */
  private get client(): RelayingUpstream {
    if (canRelay(this.upstream)) return this.upstream;
    if (canRelay(this.configured)) return this.configured;
    throw new UpstreamUnavailableError('The upstream client of this gateway cannot pass calls through.', 'upstream_unavailable');
  }

  /** One call answered as JSON, for callers without a socket (batches). Errors are the upstream's, as GatewayErrors. */
  async call(request: RelayRequest, caller: RelayCaller, signal?: AbortSignal): Promise<unknown> {
    const body = { ...request.body };
    delete body.stream;
    delete body.stream_options;
    return this.run({ ...request, body, stream: false }, caller, signal, async (answer) => {
      const json = await answer.json();
      return { value: json, usage: usageOf(json) };
    });
  }

  /**
   * One call answered over HTTP: JSON, or the upstream's event stream relayed
   * chunk by chunk. A stream's tokens are known only from its usage chunk, so
   * the upstream is always asked for it (`stream_options.include_usage`); a
   * client that did not ask for it does not get it.
   */
  async serve(received: RelayRequest, caller: RelayCaller, res: Response): Promise<void> {
    const strip = received.stream && !clientAskedUsage(received.body);
    const request = strip
      ? { ...received, body: { ...received.body, stream_options: { ...((received.body.stream_options as object | null) ?? {}), include_usage: true } } }
      : received;
    const ac = new AbortController();
    const stopWatching = onClientGone(res, () => ac.abort(new Error('client went away')));
    const flow = request.stream ? new FlowGate() : undefined;
    try {
      await this.run(
        request,
        caller,
        ac.signal,
        async (answer) => {
          if (!request.stream || !answer.contentType.includes('event-stream')) {
            const json = await answer.json();
            sendJson(res, answer.status, json);
            return { value: undefined, usage: usageOf(json) };
          }
          return { value: undefined, usage: await relayStream(answer, res, flow as FlowGate, strip) };
        },
        flow,
      );
    } catch (err) {
      if (ac.signal.aborted) return;
      if (!res.headersSent) throw err;
      // Headers are out: the failure becomes the stream's last event, in the shape the SDKs raise as an APIError.
      if (!res.writableEnded) res.end(`data: ${JSON.stringify(toErrorEnvelope(err).body)}\n\n`);
    } finally {
      stopWatching();
    }
  }

  /**
   * A chat or completion budget fitted to the model's context, as the
   * Responses and Messages surfaces fit theirs: clients written for hosted
   * models send budgets larger than a self-hosted model's whole window (Qwen
   * Code's default `max_tokens: 32000`), which vLLM refuses rather than
   * shortens. The window is the catalog's (`models`), else the server's
   * `max_model_len`; the prompt is the gateway's high estimate, and the
   * budget never drops below the useful floor (`clampOutputBudget`). Where the
   * estimate left the budget as asked and the server refuses it, the call is
   * made once more with what the server's count leaves (`refittedAfterRefusal`);
   * a prompt that really does not fit still gets the server's own refusal.
   */
  private async fitted(request: RelayRequest): Promise<RelayRequest> {
    if (request.path === '/embeddings' || !this.contexts) return request;
    const field = budgetField(request.body);
    if (!field) return request;
    const asked = request.body[field] as number;
    const window = await this.contexts.contextLength(request.model);
    const fits = clampOutputBudget(asked, window, request.estimate.prompt);
    return fits === null || fits === asked ? request : { ...request, body: { ...request.body, [field]: fits } };
  }

  private async run<T>(
    request: RelayRequest,
    caller: RelayCaller,
    signal: AbortSignal | undefined,
    deliver: (answer: RelayBody) => Promise<{ value: T; usage: Usage | null }>,
    flow?: FlowGate,
  ): Promise<T> {
    const lease: RequestLease | undefined = this.limiter ? await this.limiter.acquire(caller.owner, request.estimate) : undefined;
    const trace: RelayTrace | undefined = this.observer?.begin({
      path: request.path,
      model: request.model,
      stream: request.stream,
      owner: caller.owner,
      surface: caller.surface ?? SURFACE[request.path],
      served: caller.served,
    });
    let usage: Usage | null = null;
    try {
      request = await this.fitted(request);
      const headers = { ...(caller.headers ?? {}), ...(trace?.headers ?? {}) };
      const open = (r: RelayRequest): Promise<RelayBody> =>
        this.client.relay({ path: r.path, body: r.body, model: r.model, affinityKey: r.affinityKey, stream: r.stream, signal, flow, headers });
      let answer: RelayBody;
      try {
        answer = await open(request);
      } catch (err) {
        // Refused before a byte of the answer: once more with the budget the server's own count leaves.
        const refit = signal?.aborted ? null : refittedAfterRefusal(request, err);
        if (!refit) throw err;
        answer = await open(refit);
      }
      const delivered = await deliver(answer);
      usage = delivered.usage;
      trace?.end({ usage });
      return delivered.value;
    } catch (raw) {
      const err = asRouteError(request.path, raw);
      trace?.end(signal?.aborted ? { cancelled: true } : { error: err });
      throw err;
    } finally {
      lease?.release(usage);
    }
  }
}

/** Writes the upstream's SSE chunks as they come; a full client socket pauses the upstream read until `drain`. */
async function relayStream(answer: RelayBody, res: Response, flow: FlowGate, strip: boolean): Promise<Usage | null> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  const sniffer = new UsageSniffer(strip);
  const resume = (): void => flow.resume();
  res.on('drain', resume);
  try {
    await answer.text((chunk) => {
      const out = sniffer.push(chunk);
      if (out !== '' && !res.write(out)) flow.pause();
    });
  } finally {
    res.off('drain', resume);
  }
  res.end(sniffer.end());
  return sniffer.usage;
}
