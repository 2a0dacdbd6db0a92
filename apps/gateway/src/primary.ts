import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { resolve } from 'node:path';
import { serveMetricsPort } from '#observability/metrics/cluster-metrics.js';
import { LineWriter, type LineSink } from '#observability/logging/log-lines.js';
import { primaryServices, type PrimaryServiceSettings } from '#src/primary-services.js';
import { StartupError } from './startup-failure.js';
import { SECRET_ENV_SERVICE, runPrimary, secretEnvService } from './workers.js';

/**
 * The primary of worker mode, apart from the app: this module and what it
 * imports are all the primary loads (no Nest application, no tool modules),
 * which `test/primary-modules.e2e-spec.ts` checks.
 */

/**
 * `server.dataDir` exists and this user may write to it: the files under it
 * (the SQLite state, the containers) would otherwise fail later, naming a
 * path but not the one setting that moves them all.
 */
export function ensureDataDir(dataDir: string): void {
  const dir = resolve(dataDir);
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

/** What the primary needs of the config, read where the config sections are loaded (`primary-plan.ts`). */
export interface PrimaryPlan {
  workers: number;
  host: string;
  dataDir: string;
  logFormat: 'auto' | 'json' | 'text';
  metrics: boolean;
  metricsPort?: number;
  limits: PrimaryServiceSettings['limits'];
}

export interface PrimaryStart {
  plan: PrimaryPlan;
  /** The credentials, already taken out of the environment (`takeSecretEnv`), that the workers ask for. */
  secrets: Record<string, string>;
  worker: { entry: string; args: readonly string[] };
  out?: LineSink;
}

/** Forks and watches the workers, each of which runs the whole gateway; serves the merged metrics port. */
export async function startPrimary(start: PrimaryStart): Promise<void> {
  const { plan } = start;
  const secrets = { ...start.secrets };
  ensureDataDir(plan.dataDir);
  const writer = new LineWriter(plan, start.out ?? process.stdout);
  const { services, metrics } = primaryServices(plan);
  if (plan.metricsPort !== undefined && metrics) {
    await listenMetrics(plan.metricsPort, plan.host, async () => ({ text: await metrics.scrape(), contentType: metrics.contentType }));
  }
  // One credential for the calls workers make to each other (a container's operations forwarded
  // to the worker holding it), random per deployment unless the operator set one (replicas must share it).
  secrets.SWITCHYARD_INTERNAL_SECRET ||= randomBytes(32).toString('base64url');
  services[SECRET_ENV_SERVICE] = secretEnvService(secrets);
  runPrimary({ count: plan.workers, entry: start.worker.entry, args: start.worker.args, writer, services });
}

/** The metrics port, or a start-up error naming its setting. */
export async function listenMetrics(port: number, host: string, scrape: () => Promise<{ text: string; contentType: string }>): Promise<Server> {
  try {
    return await serveMetricsPort(port, host, scrape);
  } catch (err) {
    throw new StartupError(
      `Cannot listen on the metrics port ${port} on ${host} (setting observability.metricsPort, variable METRICS_PORT): ${(err as Error).message}. Choose another port, or unset METRICS_PORT.`,
    );
  }
}
