import cluster from 'node:cluster';
import { Controller, Get, HttpCode, Inject, Optional, Res } from '@nestjs/common';
import type { Response } from 'express';
import { RESPONSE_STATE, type ResponseStateStore } from '#core/loop/response-state.interface.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import { toErrorEnvelope } from '#http/errors/error-envelope.js';
import { GatewayRoutes } from '#http/routes/gateway-routes.decorator.js';

@Controller()
@GatewayRoutes()
export class ModelsController {
  constructor(
    @Inject(UPSTREAM_CLIENT) private readonly upstream: UpstreamClient,
    @Optional() @Inject(RESPONSE_STATE) private readonly state?: ResponseStateStore,
  ) {}

  @Get('v1/models')
  async models(): Promise<{ object: 'list'; data: unknown[] }> {
    return { object: 'list', data: await this.upstream.listModels() };
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
    const upstreamReport = upstream.status === 'fulfilled' ? { upstream: 'ok' } : { upstream: 'unavailable', upstream_error: toErrorEnvelope(upstream.reason).body.error };
    if (state.status === 'fulfilled') {
      res.status(200).json({ status: 'ready', ...upstreamReport, state: 'ok' });
      return;
    }
    const { body, headers } = toErrorEnvelope(state.reason);
    for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
    res.status(503).json({ status: 'not_ready', ...upstreamReport, state: 'unavailable', ...body });
  }
}
