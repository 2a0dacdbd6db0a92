import cluster from 'node:cluster';
import { Controller, Get, HttpCode, Inject, Logger, Optional, Res } from '@nestjs/common';
import type { Response } from 'express';
import { RESPONSE_STATE, type ResponseStateStore } from '#core/loop/response-state.interface.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import { toErrorEnvelope } from '#edge/errors/error-envelope.js';
import { errorDetailOf } from '#tool-sdk/errors.js';
import { GatewayRoutes } from '#tool-sdk/routes/gateway-routes.js';

@Controller()
@GatewayRoutes()
export class ModelsController {
  private readonly logger = new Logger('Readiness');
  /** The upstream failure last logged: probes come every few seconds, the log says each change once. */
  private lastUpstreamDetail: string | null = null;

  constructor(
    @Inject(UPSTREAM_CLIENT) private readonly upstream: UpstreamClient,
    @Optional() @Inject(RESPONSE_STATE) private readonly state?: ResponseStateStore,
  ) {}

  /**
   * One list for both SDKs that read it: OpenAI's (`object`, `id`, `created`,
   * `owned_by`) and Anthropic's (`type`, `id`, `display_name`, `created_at`,
   * and the page fields `has_more`, `first_id`, `last_id`); each ignores
   * the other's fields.
   */
  @Get('v1/models')
  async models(): Promise<{ object: 'list'; data: unknown[]; has_more: false; first_id: string | null; last_id: string | null }> {
    const data = (await this.upstream.listModels()).map(bothShapes);
    return { object: 'list', data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
  }

  /** Liveness: the process serves requests. In worker mode, `worker` says which one answered. */
  @Get('health')
  @HttpCode(200)
  health(): { status: 'ok'; worker?: number } {
    return cluster.isWorker && cluster.worker ? { status: 'ok', worker: cluster.worker.id } : { status: 'ok' };
  }

  /**
   * Readiness: this gateway can serve. The state store must answer (a replica
   * whose database is out of reach would fail every stateful request, so a
   * load balancer should stop sending it traffic): 503 otherwise. The
   * upstream's health is reported in the body but does not fail the probe:
   * a model-server outage hits every replica at once, and taking them all out
   * of the load balancer would turn the gateway's retryable 5xx answers into
   * connection errors. Both are asked at once.
   */
  @Get('ready')
  async ready(@Res() res: Response): Promise<void> {
    const [upstream, state] = await Promise.allSettled([this.upstream.probe(AbortSignal.timeout(5_000)), this.state?.probe?.()]);
    // The body is the caller's (anyone who reaches the port): the upstream's address and the fix go to the log.
    const upstreamReport = upstream.status === 'fulfilled' ? { upstream: 'ok' } : { upstream: 'unavailable', upstream_error: toErrorEnvelope(upstream.reason).body.error };
    const detail = upstream.status === 'rejected' ? errorDetailOf(upstream.reason) : null;
    if (detail && detail !== this.lastUpstreamDetail) this.logger.warn(`upstream not ready: ${detail}`);
    this.lastUpstreamDetail = detail;
    if (state.status === 'fulfilled') {
      res.status(200).json({ status: 'ready', ...upstreamReport, state: 'ok' });
      return;
    }
    const { body, headers } = toErrorEnvelope(state.reason);
    for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
    res.status(503).json({ status: 'not_ready', ...upstreamReport, state: 'unavailable', ...body });
  }
}

function bothShapes(model: { id: string; created?: unknown; [key: string]: unknown }): { id: string; [key: string]: unknown } {
  const created = typeof model.created === 'number' && Number.isFinite(model.created) ? model.created : 0;
  return { ...withMetadata(model), type: 'model', display_name: model.id, created_at: new Date(created * 1000).toISOString() };
}

/**
 * Every entry says what clients size their requests by. The model catalog
 * (`models`) fills these for its models; for any other the server's own
 * context length (vLLM's and SGLang's `max_model_len`) is the window and the
 * output bound, and modalities and reasoning are unknown (null), not guessed.
 */
function withMetadata(model: { id: string; [key: string]: unknown }): { id: string; [key: string]: unknown } {
  if ('context_window' in model) return model;
  const length = typeof model.max_model_len === 'number' && Number.isInteger(model.max_model_len) && model.max_model_len > 0 ? model.max_model_len : null;
  return { ...model, context_window: length, max_output_tokens: length, input_modalities: null, reasoning: null };
}
