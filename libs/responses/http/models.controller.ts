import cluster from 'node:cluster';
import { Controller, Get, HttpCode, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { UPSTREAM_CLIENT, type UpstreamClient } from '../../upstream/upstream-client.interface.js';
import { toErrorEnvelope } from './error-envelope.js';
import { GatewayRoutes } from './gateway-routes.decorator.js';

@Controller()
@GatewayRoutes()
export class ModelsController {
  constructor(@Inject(UPSTREAM_CLIENT) private readonly upstream: UpstreamClient) {}

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

  /** Readiness: the upstream answers too. */
  @Get('ready')
  async ready(@Res() res: Response): Promise<void> {
    try {
      await this.upstream.probe(AbortSignal.timeout(5_000));
      res.status(200).json({ status: 'ready', upstream: 'ok' });
    } catch (err) {
      const { body } = toErrorEnvelope(err);
      res.status(503).json({ status: 'not_ready', ...body });
    }
  }
}
