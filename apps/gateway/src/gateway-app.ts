import type { INestApplication, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { resolve } from 'node:path';
import { notifyPrimary, primaryOffers } from '#core/cluster/primary-channel.js';
import { serveMetricsPort } from '#observability/metrics/cluster-metrics.js';
import { GatewayMetrics } from '#observability/metrics/gateway-metrics.service.js';
import { primaryServices } from '#src/primary-services.js';
import { gatewayConfigSections, loadGatewayConfig } from '#src/gateway-config.loader.js';
import { secretEnvNames, takeSecretEnv } from '#config/config.loader.js';
import type { GatewayConfig } from '#config/gateway-config.js';
import { ToolHandlerExplorer } from '#core/handlers/tool-handler.explorer.js';
import { installGracefulDrain } from '#observability/lifecycle/graceful-drain.js';
import { LogWriter, type LineSink } from '#observability/logging/log-writer.service.js';
import { NestLogBridge } from '#observability/logging/nest-log.bridge.js';
import { startupSummary } from '#observability/startup/startup-summary.js';
import { readObservabilitySettings, readStorageSettings, readTransportsSettings } from '#src/config-sections.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { GatewayModule } from '#src/gateway.module.js';
import { describePlugin, loadPlugins, pluginExtras, pluginSpecifiers } from './plugins.js';
import { StartupError, describeStartupError } from './startup-error.js';
import { SECRET_ENV_SERVICE, STARTED_SERVICE, isWorker, runPrimary, secretEnvService, secretsFromPrimary, workerCount } from './workers.js';

export interface BootedGateway {
  app: INestApplication;
  /** The brokers it also serves the Responses patterns on (names, not URLs: those may carry passwords). */
  brokers: string[];
}

export interface BootOptions {
  /** What the loaded plugins add: tool modules beside the built-in ones, and overrides (see `pluginExtras`). */
  plugins?: ReturnType<typeof pluginExtras>;
  /**
   * Exit the process once Nest's shutdown hooks have run on SIGTERM/SIGINT
   * (the deployable gateway), rather than re-raising the signal.
   */
  exitOnShutdown?: boolean;
}

/**
 * The deployable gateway as one app: HTTP always, and the `responses.*`
 * patterns on NATS and/or Redis when `transports.natsUrl` / `transports.redisUrl`
 * are set (a hybrid app). Listening is left to the caller (`startGateway`
 * does all of it: config, workers, drain, listen, the start-up line).
 */
export async function bootGateway(config: GatewayConfig, logger: LoggerService | LogLevel[] | false = ['error', 'warn', 'log'], options: BootOptions = {}): Promise<BootedGateway> {
  const transports = readTransportsSettings(config);
  const brokers = [transports.natsUrl && 'NATS', transports.redisUrl && 'Redis'].filter((name): name is string => !!name);
  // Loaded only when a broker is configured: an HTTP-only gateway needs no broker client installed.
  const microservice = brokers.length > 0 ? await import('#src/microservice.js') : undefined;
  const imports = [...(options.plugins?.imports ?? []), ...(microservice ? [microservice.GatewayMicroserviceModule.forRoot({ prefix: transports.patternPrefix })] : [])];
  const overrides = { upstream: options.plugins?.upstream, stateStore: options.plugins?.stateStore };
  const app = await NestFactory.create(GatewayModule.forRoot({ config, imports, ...overrides }), { bodyParser: false, logger, abortOnError: false });
  try {
    // Registered before configureGatewayApp's own call (which then keeps these): exit 0 once shut
    // down, rather than re-raising the signal, which a second-signal handler would take for an
    // operator's second Ctrl+C.
    if (options.exitOnShutdown) app.enableShutdownHooks(undefined, { useProcessExit: true });
    configureGatewayApp(app, { standalone: true });
    if (microservice) {
      try {
        await microservice.connectGatewayTransports(app);
      } catch (err) {
        const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
        throw new StartupError(
          `Cannot connect to the message broker (${brokers.join(', ')}; variables NATS_URL / REDIS_URL, settings transports.natsUrl / transports.redisUrl): ${reason}. Check that the broker is running and reachable, or unset the variable to serve HTTP only.`,
        );
      }
    }
  } catch (err) {
    await Promise.race([app.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
    throw err;
  }
  return { app, brokers };
}

export interface HostOptions {
  env: Record<string, string | undefined>;
  /** `--config`: overrides SWITCHYARD_CONFIG. */
  configFile?: string;
  /** `--port`: overrides PORT. */
  port?: number;
  /** `--plugin` flags: loaded after the config file's `plugins` and `SWITCHYARD_PLUGINS`. */
  plugins?: readonly string[];
  out?: LineSink;
  /**
   * Worker mode: the entry point each worker runs and its arguments (the
   * program's main module and the arguments after it). Needed when the
   * gateway runs more than one worker.
   */
  worker?: { entry: string; args: readonly string[] };
}

/**
 * `server.dataDir` exists and this user may write to it: the files under it
 * (the SQLite state, the containers) would otherwise fail later, naming a
 * path but not the one setting that moves them all.
 */
export function ensureDataDir(config: GatewayConfig): void {
  const dir = resolve(config.server.dataDir);
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    const code = (err as { code?: string }).code ?? (err as Error).message;
    const user = typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
    throw new StartupError(
      `Cannot write to the data directory ${dir} (setting server.dataDir, variable SWITCHYARD_DATA_DIR): ${code}. Make it writable by the gateway's user${user}, or point SWITCHYARD_DATA_DIR at a writable directory (in a container: the mounted volume).`,
    );
  }
}

/**
 * Starts the deployable gateway: config (defaults, file, environment, flags),
 * worker mode, the app (HTTP, and NATS / Redis when `NATS_URL` / `REDIS_URL`
 * are set), listen, the start-up line, and the drain on shutdown
 * (`SHUTDOWN_GRACE_MS`). Any failure comes back as one `StartupError` line.
 * Resolves to null in the primary of worker mode, which only forks and watches.
 */
export async function startGateway(options: HostOptions): Promise<{ app: INestApplication; config: GatewayConfig; url: string } | null> {
  let config: GatewayConfig | undefined;
  let app: INestApplication | undefined;
  const out = options.out ?? process.stdout;
  try {
    // A worker's credentials come from the primary over the IPC channel, never through its environment.
    const env = isWorker() ? { ...options.env, ...(await secretsFromPrimary()) } : options.env;
    // Plugins first: their modules may declare config sections, which the config is then checked against.
    const specifiers = pluginSpecifiers({ env, configFile: options.configFile, flags: options.plugins });
    const plugins = await loadPlugins(specifiers);
    const extras = pluginExtras(plugins);
    const sections = gatewayConfigSections({ imports: extras.imports });
    config = loadGatewayConfig({
      env,
      file: options.configFile,
      sections,
      overrides: { plugins: specifiers, ...(options.port !== undefined ? { server: { port: options.port } } : {}) },
    });
    // Loaded: the credentials leave the environment, so no child process (a sandbox, an MCP server) inherits them.
    const secrets = takeSecretEnv(options.env, secretEnvNames(sections));
    if (options.env !== process.env) takeSecretEnv(process.env, Object.keys(secrets));
    // Broker patterns are served from one process (see below), so with a broker and no
    // WORKERS setting the gateway runs as one process rather than one per core.
    const transports = readTransportsSettings(config);
    const withBrokers = !!(transports.natsUrl || transports.redisUrl);
    const workers = withBrokers && config.server.workers === undefined ? 1 : workerCount(config.server.workers);
    if (workers > 1 && readStorageSettings(config).driver === 'memory') {
      throw new StartupError('storage.driver=memory keeps state inside one process; with WORKERS > 1 use sqlite or postgres (or set WORKERS=1).', 2);
    }
    if (workers > 1 && withBrokers) {
      // Every worker would subscribe to the patterns and run each broker request once per worker
      // (Redis has no queue groups; a NATS queue group would deliver a cancel to one worker only).
      throw new StartupError('NATS_URL / REDIS_URL serve the broker patterns from one process: set WORKERS=1, or run a separate replica for the brokers.', 2);
    }
    ensureDataDir(config);
    const observability = readObservabilitySettings(config);
    const writer = new LogWriter(observability, out);
    // Worker mode: this process only forks and watches the workers, each of which runs all of the below.
    if (workers > 1 && !isWorker()) {
      if (!options.worker) throw new StartupError('Worker mode needs the entry point to fork (options.worker); set WORKERS=1 to run one process.');
      const { services, metrics } = primaryServices(config);
      if (observability.metricsPort !== undefined && metrics) {
        await listenMetrics(observability.metricsPort, config.server.host, async () => ({ text: await metrics.scrape(), contentType: metrics.contentType }));
      }
      // One credential for the calls workers make to each other (a container's operations forwarded
      // to the worker holding it), random per deployment unless the operator set one (replicas must share it).
      secrets.SWITCHYARD_INTERNAL_SECRET ||= randomBytes(32).toString('base64url');
      services[SECRET_ENV_SERVICE] = secretEnvService(secrets);
      runPrimary({ count: workers, entry: options.worker.entry, args: options.worker.args, writer, services });
      return null;
    }
    const nestLogger = new NestLogBridge(writer);
    const booted = await bootGateway(config, nestLogger, { exitOnShutdown: true, plugins: extras });
    const microservice = booted.brokers.length > 0 ? await import('#src/microservice.js') : undefined;
    app = booted.app;
    const runs = microservice ? app.get(microservice.RpcRunRegistry) : undefined;
    installGracefulDrain(app, config.server.shutdownGraceMs, (inFlight) =>
      writer.write('info', 'draining', { in_flight: inFlight, ...(runs ? { broker_runs: runs.size } : {}), grace_ms: config!.server.shutdownGraceMs }),
    );
    // Broker runs drain next to HTTP's, in the same first step of the shutdown, before the broker connections close.
    if (runs) chainBeforeClose(app, () => runs.drain(config!.server.shutdownGraceMs));
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
    // One process serves its own metrics port; in worker mode the primary does, for all of them.
    if (observability.metricsPort !== undefined && observability.metrics && !isWorker()) {
      const metrics = app.get(GatewayMetrics);
      const server = await listenMetrics(observability.metricsPort, config.server.host, async () => ({ text: await metrics.scrape(), contentType: metrics.contentType }));
      app.getHttpServer().once('close', () => server.close());
    }
    const summary = {
      ...startupSummary(config, app.get(ToolHandlerExplorer), url),
      ...(booted.brokers.length > 0 ? { brokers: booted.brokers } : {}),
      ...(plugins.length > 0 ? { plugins: plugins.map(describePlugin) } : {}),
    };
    // In worker mode the primary prints one summary for all the workers.
    if (primaryOffers(STARTED_SERVICE)) await notifyPrimary(STARTED_SERVICE, summary);
    else writer.write('info', 'listening', summary);
    return { app, config, url };
  } catch (err) {
    // Whatever the partial start opened (pools, sockets, timers) must not keep the process alive.
    await Promise.race([app?.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
    throw describeStartupError(err, config);
  }
}

/** The metrics port, or a start-up error naming its setting. */
async function listenMetrics(port: number, host: string, scrape: () => Promise<{ text: string; contentType: string }>): Promise<Server> {
  try {
    return await serveMetricsPort(port, host, scrape);
  } catch (err) {
    throw new StartupError(
      `Cannot listen on the metrics port ${port} on ${host} (setting observability.metricsPort, variable METRICS_PORT): ${(err as Error).message}. Choose another port, or unset METRICS_PORT.`,
    );
  }
}

/** Runs `alsoDrain` alongside the HTTP adapter's `beforeClose` (the graceful drain's step). */
function chainBeforeClose(app: INestApplication, alsoDrain: () => Promise<void>): void {
  const adapter = app.getHttpAdapter() as unknown as { beforeClose?: () => unknown };
  const original = adapter.beforeClose?.bind(adapter);
  adapter.beforeClose = async () => {
    await Promise.all([alsoDrain(), original?.()]);
  };
}
