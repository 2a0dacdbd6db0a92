import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Server } from 'node:http';
import { loadGatewayConfig } from '../../../libs/config/config.loader.js';
import type { GatewayConfig } from '../../../libs/config/gateway-config.js';
import { ToolHandlerExplorer } from '../../../libs/core/handlers/tool-handler.explorer.js';
import { installGracefulDrain } from '../../../libs/observability/lifecycle/graceful-drain.js';
import { LogWriter, type LineSink } from '../../../libs/observability/logging/log-writer.service.js';
import { NestLogBridge } from '../../../libs/observability/logging/nest-log.bridge.js';
import { startupSummary } from '../../../libs/observability/startup/startup-summary.js';
import { configureGatewayApp } from '../../../src/configure-app.js';
import { GatewayModule } from '../../../src/gateway.module.js';
import { StartupError, describeStartupError } from './startup-error.js';
import { isWorker, runPrimary, workerCount } from './workers.js';

export interface HostOptions {
  env: Record<string, string | undefined>;
  /** `--config`: overrides SWITCHYARD_CONFIG. */
  configFile?: string;
  /** `--port`: overrides PORT. */
  port?: number;
  out?: LineSink;
}

/**
 * Boots the deployable gateway: config (defaults, file, environment, flags),
 * the module, the HTTP set-up, listen, the start-up summary, and the drain
 * on shutdown. Any failure comes back as one `StartupError` line.
 */
export async function startGateway(options: HostOptions): Promise<{ app: INestApplication; config: GatewayConfig; url: string } | null> {
  let config: GatewayConfig | undefined;
  let app: INestApplication | undefined;
  const out = options.out ?? process.stdout;
  try {
    config = loadGatewayConfig({
      env: options.env,
      file: options.configFile,
      overrides: options.port !== undefined ? { server: { port: options.port } } : undefined,
    });
    // Worker mode: this process only forks and watches the workers, each of which runs all of the below.
    const workers = workerCount(config.server.workers);
    if (workers > 1 && config.storage.driver === 'memory') {
      throw new StartupError('storage.driver=memory keeps state inside one process; with WORKERS > 1 use sqlite or postgres (or set WORKERS=1).', 2);
    }
    if (workers > 1 && !isWorker()) {
      runPrimary(workers);
      return null;
    }
    const writer = new LogWriter(config, out);
    const nestLogger = new NestLogBridge(writer);
    app = await NestFactory.create(GatewayModule.forRoot({ config }), { bodyParser: false, logger: nestLogger, abortOnError: false });
    // Registered before configureGatewayApp's own call (which then keeps these): exit 0 once shut
    // down, rather than re-raising the signal, which the second-signal handler below would take
    // for an operator's second Ctrl+C.
    app.enableShutdownHooks(undefined, { useProcessExit: true });
    configureGatewayApp(app);
    installGracefulDrain(app, config.server.shutdownGraceMs, (inFlight) =>
      writer.write('info', 'draining', { in_flight: inFlight, grace_ms: config!.server.shutdownGraceMs }),
    );
    await app.listen(config.server.port, config.server.host);
    nestLogger.booting = false;
    // The first signal drains (Nest's shutdown hooks); a second one means "now", as an operator at a terminal expects.
    let signals = 0;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        if (++signals < 2) return;
        writer.write('warn', 'second signal: exiting without waiting for open requests', { signal });
        process.exit(130);
      });
    }
    const address = (app.getHttpServer() as Server).address();
    const port = typeof address === 'object' && address ? address.port : config.server.port;
    const url = `http://${config.server.host}:${port}`;
    writer.write('info', 'listening', startupSummary(config, app.get(ToolHandlerExplorer), url));
    return { app, config, url };
  } catch (err) {
    // Whatever the partial start opened (pools, sockets, timers) must not keep the process alive.
    await Promise.race([app?.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
    throw describeStartupError(err, config);
  }
}
