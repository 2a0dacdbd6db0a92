import { Controller, Get } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { GatewayRoutes } from '#tool-sdk/routes/gateway-routes.js';
import { openApiDocument, routesOf } from './openapi-document.js';

/** `GET /openapi.json`: the document of every route this gateway serves, built once from its controllers. */
@Controller()
@GatewayRoutes()
export class OpenApiController {
  private document?: Record<string, unknown>;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  @Get('openapi.json')
  openapi(): Record<string, unknown> {
    // The routes are fixed once the app is built: one document for the process's life.
    return (this.document ??= openApiDocument(routesOf(this.discovery, this.scanner), '1'));
  }
}
