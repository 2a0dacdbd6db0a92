import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayMetrics } from './gateway-metrics.service.js';

/**
 * Counts open WebSocket connections from the HTTP server's `upgrade` event,
 * which sees every socket whatever module answers it; a socket leaves the
 * count when it closes (a refused upgrade closes at once).
 */
@Injectable()
export class WebSocketGauge implements OnApplicationBootstrap {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly metrics: GatewayMetrics,
  ) {}

  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    server?.on('upgrade', (_req: IncomingMessage, socket: Duplex) => {
      this.metrics.openWebSockets.inc();
      socket.once('close', () => this.metrics.openWebSockets.dec());
    });
  }
}
