import { createServer, type Server } from 'node:http';
import type { PrimaryService } from '#core/cluster/primary-channel.js';
import { AggregatorRegistry, type Registry } from 'prom-client';

/** The primary service's name in worker mode (see `#core/cluster/primary-channel.js`). */
export const METRICS_SERVICE = 'metrics';

/**
 * In the primary of worker mode: every worker's series merged into one view
 * (prom-client's cluster aggregator: counters and histograms summed, so a
 * scrape sees the gateway's totals whichever worker answers it). Series that
 * carry a `worker` label stay one per worker.
 */
export class ClusterMetrics {
  private readonly aggregator = new AggregatorRegistry();

  get contentType(): string {
    return this.aggregator.contentType;
  }

  scrape(): Promise<string> {
    return this.aggregator.clusterMetrics();
  }

  /** What a worker's `GET /metrics` asks for. */
  service(): PrimaryService {
    return { handle: async () => ({ text: await this.scrape(), contentType: this.contentType }) };
  }
}

/** In a worker: answers the primary's aggregator with this registry's series. */
export function exposeToPrimary(registry: Registry): void {
  // Constructing one installs prom-client's worker-side listener; the registry list is global.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}

/**
 * `observability.metricsPort`: the metrics on a port of their own, without
 * the API key the gateway's routes need, for a scraper inside the cluster
 * network. Every path answers with the exposition.
 */
export function serveMetricsPort(port: number, host: string, scrape: () => Promise<{ text: string; contentType: string }>): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    scrape().then(
      ({ text, contentType }) => res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => res.writeHead(503, { 'content-type': 'text/plain' }).end(`metrics unavailable: ${err instanceof Error ? err.message : String(err)}\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      // It answers scrapes only: it never holds the process open once the gateway has stopped.
      server.unref();
      resolve(server);
    });
  });
}
