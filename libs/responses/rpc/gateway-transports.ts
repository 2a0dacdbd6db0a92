import type { INestApplication } from '@nestjs/common';
import { type MicroserviceOptions, Transport } from '@nestjs/microservices';
import { GATEWAY_CONFIG, type GatewayConfig } from '#config/gateway-config.js';
import { RedisServeLock, redisConnectionName } from './redis-serve-lock.js';
import { SERVED_RESPONSES_PATTERNS, type ResponsesPatterns, servedPatterns } from './responses-rpc.patterns.js';
import { RpcRunRegistry } from './rpc-run.registry.js';
import { ServeLeaseHolder } from './serve-lease.holder.js';
import { type TransportsConfig, readTransportsSettings } from './transports.config-section.js';

/**
 * Nest microservice options for the configured brokers (`transports.natsUrl`, `transports.redisUrl`).
 * Given the patterns served, the Redis connections are named after them (see `redisConnectionName`).
 */
export function gatewayTransports(transports: TransportsConfig | undefined, patterns?: ResponsesPatterns): MicroserviceOptions[] {
  const out: MicroserviceOptions[] = [];
  // A queue group: several gateways on one NATS share the requests instead of each running every one.
  if (transports?.natsUrl) out.push({ transport: Transport.NATS, options: { servers: [transports.natsUrl], queue: transports.natsQueue || undefined } });
  if (transports?.redisUrl) {
    const url = new URL(transports.redisUrl);
    const db = url.pathname.replace(/^\//, '');
    out.push({
      transport: Transport.REDIS,
      options: {
        host: url.hostname,
        port: url.port ? Number(url.port) : 6379,
        username: url.username ? decodeURIComponent(url.username) : undefined,
        password: url.password ? decodeURIComponent(url.password) : undefined,
        db: db ? Number(db) : undefined,
        tls: url.protocol === 'rediss:' ? {} : undefined,
        connectionName: patterns ? redisConnectionName('rpc', patterns.create) : undefined,
      },
    });
  }
  return out;
}

/**
 * Makes an HTTP app hybrid: connects every configured broker (the app must
 * import `GatewayMicroserviceModule`) and starts listening on them. Returns
 * how many were connected; with none configured it does nothing.
 *
 * On Redis it first takes the lease on the patterns the module serves (so two
 * gateways never both hear one request). When the broker runs start draining
 * (`RpcRunRegistry.drain`), the gateway stops taking requests at once: it
 * leaves the NATS queue group and unsubscribes the Redis request channels
 * (then gives the lease up, to a gateway waiting for it), while the runs it
 * holds finish and reply over the connections, which stay open until close.
 * `app.close()` closes them and gives the lease up (`ServeLeaseHolder`).
 */
export async function connectGatewayTransports(app: INestApplication): Promise<number> {
  const config = app.get<GatewayConfig>(GATEWAY_CONFIG);
  const settings = readTransportsSettings(config);
  if (gatewayTransports(settings).length === 0) return 0;
  const patterns = servedBy(app, settings);
  const transports = gatewayTransports(settings, patterns);
  // Both looked up before the lease is taken: an app without the module fails here, holding nothing.
  const runs = app.get(RpcRunRegistry, { strict: false });
  const leases = app.get(ServeLeaseHolder, { strict: false });
  let lock: RedisServeLock | undefined;
  if (settings.redisUrl) {
    lock = await RedisServeLock.acquire(settings.redisUrl, patterns.create, { waitMs: settings.redisLeaseWaitMs });
    // Given up by app.close() (the holder's shutdown hook), also when starting the transports below fails.
    leases.hold(lock);
  }
  for (const options of transports) app.connectMicroservice<MicroserviceOptions>(options, { inheritAppConfig: true });
  await app.startAllMicroservices();
  runs.onDrain(async () => {
    await Promise.all(app.getMicroservices().map((microservice) => stopTakingRequests(microservice.getTransportServer(), patterns)));
    await lock?.release();
  });
  return transports.length;
}

/** The patterns the app's `GatewayMicroserviceModule` serves; the config's prefix when it has none. */
function servedBy(app: INestApplication, settings: TransportsConfig): ResponsesPatterns {
  let served: ResponsesPatterns | undefined;
  try {
    served = app.get<ResponsesPatterns>(SERVED_RESPONSES_PATTERNS, { strict: false });
  } catch {
    served = undefined;
  }
  const configured = servedPatterns(undefined, settings.patternPrefix);
  // The bare module serves unprefixed patterns: with a prefix configured, the lease would not cover them.
  if (served && settings.patternPrefix && served.create !== configured.create) {
    throw new Error(
      `transports.patternPrefix (TRANSPORT_PATTERN_PREFIX) is '${settings.patternPrefix}' but the app serves '${served.create}'; import GatewayMicroserviceModule.forRoot(), which serves the configured prefix.`,
    );
  }
  return served ?? configured;
}

interface NatsSubscription {
  getSubject(): string;
  drain(): Promise<void>;
}

/** Unsubscribes the request patterns (not `cancel`: the runs still held must hear theirs). */
async function stopTakingRequests(server: unknown, patterns: ResponsesPatterns): Promise<void> {
  const requests = new Set([patterns.create, patterns.stream]);
  const transport = (server as { transportId?: unknown }).transportId;
  if (transport === Transport.NATS) {
    const subscriptions = (server as { subscriptions?: NatsSubscription[] }).subscriptions ?? [];
    // Drain, not unsubscribe: the server stops routing to this member of the queue group, and
    // messages already delivered are still handled (refused as draining, so their callers retry).
    await Promise.all(subscriptions.filter((sub) => requests.has(sub.getSubject())).map((sub) => sub.drain().catch(() => undefined)));
  } else if (transport === Transport.REDIS) {
    const redis = server as { subClient?: { unsubscribe(...channels: string[]): Promise<unknown> }; getRequestPattern(pattern: string): string };
    await redis.subClient?.unsubscribe(...[...requests].map((pattern) => redis.getRequestPattern(pattern))).catch(() => undefined);
  }
}
