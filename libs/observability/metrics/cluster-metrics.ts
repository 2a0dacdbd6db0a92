import cluster, { type Worker } from 'node:cluster';
import { createServer, type Server } from 'node:http';
import { notifyPrimary, type PrimaryService } from '#core/cluster/primary-channel.js';
import type { Registry } from 'prom-client';

/** The primary service's name in worker mode (see `#core/cluster/primary-channel.js`). */
export const METRICS_SERVICE = 'metrics';

const REQUEST = 'switchyard:metrics-request';
const ANSWER = 'switchyard:metrics-answer';

type WorkerMetrics = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;
type MetricsCall = { op: 'ready' } | { op: 'scrape' };

/** prom-client's `Registry.PROMETHEUS_CONTENT_TYPE`, which the merged exposition is written in. */
const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * In the primary of worker mode: every worker's series merged into one view
 * (prom-client's `AggregatorRegistry.aggregate`: counters and histograms
 * summed, so a scrape sees the gateway's totals whichever worker answers it).
 * Series that carry a `worker` label stay one per worker. Only workers that
 * said their registry is ready are asked, so a worker still booting (or
 * replacing one that died) does not stall the scrape; one that exits during a
 * scrape fails that scrape rather than under-count it (a lower total would
 * read as a counter reset).
 */
export class ClusterMetrics {
  private readonly ready = new Set<number>();
  private readonly pending = new Map<number, { waiting: Set<number>; answers: WorkerMetrics[]; done(err: Error | null): void }>();
  private nextId = 1;

  constructor(private readonly timeoutMs = 5_000) {
    cluster.on('message', (worker: Worker, message: { type?: string; id?: number; metrics?: WorkerMetrics }) => {
      if (message?.type !== ANSWER || message.id === undefined) return;
      const scrape = this.pending.get(message.id);
      if (!scrape || !scrape.waiting.delete(worker.id)) return;
      scrape.answers.push(message.metrics ?? []);
      if (scrape.waiting.size === 0) scrape.done(null);
    });
    cluster.on('exit', (worker: Worker) => {
      this.ready.delete(worker.id);
      for (const scrape of this.pending.values()) if (scrape.waiting.has(worker.id)) scrape.done(new Error(`worker ${worker.id} exited during the scrape`));
    });
  }

  get contentType(): string {
    return EXPOSITION_CONTENT_TYPE;
  }

  async scrape(): Promise<string> {
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && this.ready.has(w.id) && w.isConnected());
    const id = this.nextId++;
    const answers: WorkerMetrics[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`workers did not answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      const finish = (err: Error | null) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      this.pending.set(id, { waiting: new Set(workers.map((w) => w.id)), answers, done: finish });
      if (workers.length === 0) return finish(null);
      for (const worker of workers) worker.send({ type: REQUEST, id });
    });
    // Loaded at the first scrape: the primary holds prom-client (~10 MiB resident) only where metrics are read.
    const { AggregatorRegistry } = await import('prom-client');
    return AggregatorRegistry.aggregate(answers as never).metrics();
  }

  /** What a worker calls: `ready` once its registry answers, `scrape` for its `GET /metrics`. */
  service(): PrimaryService {
    return {
      handle: async (payload: unknown, worker: Worker) => {
        if ((payload as MetricsCall)?.op === 'ready') {
          this.ready.add(worker.id);
          return null;
        }
        return { text: await this.scrape(), contentType: this.contentType };
      },
    };
  }
}

/** In a worker: answers the primary's requests with this registry's series, then tells it so. */
export function exposeToPrimary(registry: Registry): void {
  process.on('message', (message: { type?: string; id?: number }) => {
    if (message?.type !== REQUEST) return;
    void registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: ANSWER, id: message.id, metrics }),
      () => process.send?.({ type: ANSWER, id: message.id, metrics: [] }),
    );
  });
  void notifyPrimary(METRICS_SERVICE, { op: 'ready' } satisfies MetricsCall);
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
