import type { INestApplication, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Server } from 'node:http';
import { notifyPrimary, primaryOffers } from '#core/cluster/primary-channel.js';
import { GatewayMetrics } from '#observability/metrics/gateway-metrics.service.js';
import { gatewayConfigSections, loadGatewayConfig } from '#src/gateway-config.loader.js';
import { secretEnvNames, takeSecretEnv } from '#config/config.loader.js';
import { codeExecutionRefusal } from '#config/exposure.js';
import { settingLikeVariables } from '#config/setting-like-env.js';
import type { GatewayConfig } from '#config/gateway-config.js';
import { ToolHandlerExplorer } from '#core/handlers/tool-handler.explorer.js';
import { installGracefulDrain } from '#observability/lifecycle/graceful-drain.js';
import { LogWriter, type LineSink } from '#observability/logging/log-writer.service.js';
import { NestLogBridge } from '#observability/logging/nest-log.bridge.js';
import { startupSummary } from '#observability/startup/startup-summary.js';
import { readObservabilitySettings, readTransportsSettings } from '#src/config-sections.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { gatewayHttpAdapter } from '#src/gateway-http-adapter.js';
import { GatewayModule } from '#src/gateway.module.js';
import { describePlugin, loadPlugins, pluginExtras, pluginSpecifiers } from './plugins.js';
import { StartupError, describeStartupError } from './startup-error.js';
import { ensureDataDir, listenMetrics, startPrimary } from './primary.js';
import { primaryPlan } from './primary-plan.js';
import { unreachableUpstreams } from './upstream-probe.js';
import { STARTED_SERVICE, isWorker, secretsFromPrimary } from './workers.js';

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
  const app = await NestFactory.create(GatewayModule.forRoot({ config, imports, ...overrides }), gatewayHttpAdapter(), { bodyParser: false, logger, abortOnError: false });
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
        // The broker answered, but another gateway serves these patterns: that, not reachability, is the problem.
        if (err instanceof microservice.RedisPatternsTakenError) throw new StartupError(`Cannot serve on Redis: ${err.message}`);
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

export { ensureDataDir } from './primary.js';

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
    const observability = readObservabilitySettings(config);
    const writer = new LogWriter(observability, out);
    // Said once, by the process that read the environment first (a worker's copy would repeat it).
    if (!isWorker()) {
      for (const warning of settingLikeVariables(env, sections)) writer.write('warn', warning);
      // Not awaited: the gateway starts whether or not the upstream is up yet.
      void unreachableUpstreams(config).then((warnings) => warnings.forEach((warning) => writer.write('warn', warning)));
    }
    const plan = primaryPlan(config);
    // Said once per gateway (the primary, or the one process), before anything listens.
    const codeOff = codeExecutionRefusal(config);
    if (codeOff && !isWorker()) writer.write('warn', `code execution is off: ${codeOff}`, { host: config.server.host });
    // Worker mode: this process only forks and watches the workers, each of which runs all of the below.
    if (plan.workers > 1 && !isWorker()) {
      if (!options.worker) throw new StartupError('Worker mode needs the entry point to fork (options.worker); set WORKERS=1 to run one process.');
      await startPrimary({ plan, secrets, worker: options.worker, out });
      return null;
    }
    ensureDataDir(config.server.dataDir);
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

/** Runs `alsoDrain` alongside the HTTP adapter's `beforeClose` (the graceful drain's step). */
function chainBeforeClose(app: INestApplication, alsoDrain: () => Promise<void>): void {
  const adapter = app.getHttpAdapter() as unknown as { beforeClose?: () => unknown };
  const original = adapter.beforeClose?.bind(adapter);
  adapter.beforeClose = async () => {
    await Promise.all([alsoDrain(), original?.()]);
  };
}
