import { Controller, Get, NotFoundException, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { OBSERVABILITY_SETTINGS, type ObservabilityConfig } from '../config/observability.config-section.js';
import { GatewayRoutes } from '#tool-sdk/routes/gateway-routes.js';
import { GatewayMetrics } from './gateway-metrics.service.js';

/** Prometheus text exposition; a gateway route, so behind the API-key guard like every route but the probes. */
@GatewayRoutes()
@Controller()
export class MetricsController {
  constructor(
    private readonly metrics: GatewayMetrics,
    @Inject(OBSERVABILITY_SETTINGS) private readonly settings: ObservabilityConfig,
  ) {}

  @Get('metrics')
  async scrape(@Res() res: Response): Promise<void> {
    if (!this.settings.metrics) throw new NotFoundException();
    const body = await this.metrics.scrape();
    res.status(200).setHeader('Content-Type', this.metrics.contentType).end(body);
  }
}
