import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { RedisServeLock } from './redis-serve-lock.js';

/**
 * Holds the Redis serving lease that `connectGatewayTransports` takes, and
 * gives it up (closing its connection) when the app shuts down.
 *
 * A shutdown hook rather than a wrapper around `app.close`: the app
 * `NestFactory.create` returns is a proxy whose `set` trap drops assignments,
 * so a replaced `close` is never the one called, and the lease, its refresh
 * and its socket would outlive the app (keeping the process alive and a
 * restarted gateway refused). Nest runs this hook after it has closed the
 * HTTP server and the microservices, so the lease is kept while they serve.
 */
@Injectable()
export class ServeLeaseHolder implements OnApplicationShutdown {
  private readonly leases = new Set<RedisServeLock>();

  hold(lease: RedisServeLock): void {
    this.leases.add(lease);
  }

  async onApplicationShutdown(): Promise<void> {
    const leases = [...this.leases];
    this.leases.clear();
    await Promise.all(leases.map((lease) => lease.release()));
  }
}
