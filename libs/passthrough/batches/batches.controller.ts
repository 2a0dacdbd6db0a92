import { Body, Controller, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { requestOwner } from '#tool-sdk/routes/request-owner.js';
import { GatewayRoutes } from '#tool-sdk/routes/gateway-routes.js';
import { BatchesService } from './batches.service.js';

/** The Batch API: create, retrieve, list, cancel (openai-node `client.batches`). */
@Controller('v1/batches')
@GatewayRoutes()
export class BatchesController {
  constructor(private readonly batches: BatchesService) {}

  @Post()
  @HttpCode(200)
  create(@Body() body: unknown, @Req() req: Request): Promise<Record<string, unknown>> {
    return this.batches.create(body, requestOwner(req));
  }

  @Get()
  list(@Query() query: Record<string, unknown>, @Req() req: Request): Promise<Record<string, unknown>> {
    return this.batches.list(requestOwner(req), query);
  }

  @Get(':id')
  get(@Param('id') id: string, @Req() req: Request): Promise<Record<string, unknown>> {
    return this.batches.get(id, requestOwner(req));
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Param('id') id: string, @Req() req: Request): Promise<Record<string, unknown>> {
    return this.batches.cancel(id, requestOwner(req));
  }
}
