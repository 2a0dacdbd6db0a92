import { createHash } from 'node:crypto';
import { Observable, type Subscription } from 'rxjs';
import { isGatewayError, UpstreamHttpError, UpstreamTimeoutError, UpstreamUnavailableError } from '#tool-sdk/errors.js';
import type { ModelEvent, ModelRequest } from '#core/protocol/model-events.js';
import type { InferOptions, ModelInfo, TokenizeRequest, UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import { canRelay, type RelayBody, type RelayCall, type RelayingUpstream } from '#core/upstream/upstream-relay.interface.js';

/** One model server behind the pool, with what the pool knows of it. */
interface Replica {
  url: string;
  client: UpstreamClient & { close?(): void };
  /** Requests running on it now: the load the balancer compares. */
  outstanding: number;
  healthy: boolean;
  /** Consecutive failures, for the backoff. */
  failures: number;
  /** While unhealthy: not tried before this time (epoch ms), except as a last resort. */
  retryAt: number;
  /** Models it reported at its last health check; null before the first. */
  models: Set<string> | null;
  served: number;
}

export interface ReplicaStatus {
  url: string;
  healthy: boolean;
  outstanding: number;
  served: number;
  models: string[] | null;
}

export interface UpstreamPoolOptions {
  /** Health-check period, and the ceiling of a failed replica's backoff. */
  healthCheckMs: number;
  /** First backoff after a failure; doubles per consecutive failure. */
  minBackoffMs?: number;
}

/**
 * A replica may take this much more than its share of the running requests
 * before its affinity yields to the least loaded one ("consistent hashing
 * with bounded loads"): one hot conversation cannot swamp a replica, and the
 * common case keeps each conversation's prefix cache warm.
 */
const LOAD_FACTOR = 1.25;

/** Faults of the replica itself (down, overloaded, timed out), worth trying another for; 4xx is the request's own. */
function isReplicaFault(err: unknown): boolean {
  if (err instanceof UpstreamUnavailableError || err instanceof UpstreamTimeoutError) return true;
  if (err instanceof UpstreamHttpError) return err.upstreamStatus >= 500 || err.upstreamStatus === 429;
  return !isGatewayError(err);
}

/** Rendezvous hashing: every replica gets a score for the key; the highest wins, and the order is stable as replicas come and go. */
function score(key: string, url: string): bigint {
  return createHash('sha256').update(key).update('\0').update(url).digest().readBigUInt64BE(0);
}

/**
 * The conversation a request belongs to, as far as the model server's prefix
 * cache is concerned: the client's `prompt_cache_key`, else the opening of
 * the transcript (instructions and first item), which every turn of one
 * conversation repeats, whether continued by `previous_response_id`, a
 * conversation or a full history.
 */
export function affinityKey(request: ModelRequest): string {
  if (request.prompt_cache_key) return `key:${request.prompt_cache_key}`;
  const first = Array.isArray(request.input) ? request.input[0] : request.input;
  return `prefix:${request.model}\0${request.instructions ?? ''}\0${JSON.stringify(first ?? null)}`;
}

/**
 * Several model servers as one `UpstreamClient`: active health checks,
 * prefix-cache affinity with bounded load, least-outstanding fallback, and
 * failover that never replays a stream. A request moves to another replica
 * only when the one it tried failed before producing any event; once events
 * have reached the client, a failure ends the request (as `response.failed`),
 * because the model's answer cannot be silently restarted elsewhere.
 */
export class UpstreamPool implements UpstreamClient, RelayingUpstream {
  readonly dialect: 'responses' | 'chat';
  private readonly replicas: Replica[];
  private timer?: NodeJS.Timeout;
  private checking = false;

  constructor(
    replicas: Array<{ url: string; client: UpstreamClient & { close?(): void } }>,
    private readonly options: UpstreamPoolOptions,
  ) {
    if (replicas.length === 0) throw new Error('An upstream pool needs at least one replica.');
    this.dialect = replicas[0].client.dialect;
    this.replicas = replicas.map(({ url, client }) => ({
      url,
      client,
      outstanding: 0,
      healthy: true,
      failures: 0,
      retryAt: 0,
      models: null,
      served: 0,
    }));
    this.timer = setInterval(() => void this.checkHealth(), options.healthCheckMs);
    this.timer.unref();
    void this.checkHealth();
  }

  status(): ReplicaStatus[] {
    return this.replicas.map((r) => ({
      url: r.url,
      healthy: r.healthy,
      outstanding: r.outstanding,
      served: r.served,
      models: r.models ? [...r.models] : null,
    }));
  }

  infer(request: ModelRequest, options: InferOptions = {}): Observable<ModelEvent> {
    return new Observable<ModelEvent>((subscriber) => {
      const order = this.candidates(affinityKey(request), request.model);
      let attempt = 0;
      let emitted = false;
      let current: { replica: Replica; subscription: Subscription; released: boolean } | undefined;
      let lastError: unknown;

      const release = () => {
        if (current && !current.released) {
          current.released = true;
          current.replica.outstanding--;
        }
      };
      const tryNext = (): void => {
        const replica = order[attempt++];
        if (!replica) {
          subscriber.error(lastError ?? new UpstreamUnavailableError('No upstream replica is available for this model.', 'upstream_unavailable'));
          return;
        }
        replica.outstanding++;
        replica.served++;
        const slot = { replica, subscription: undefined as unknown as Subscription, released: false };
        current = slot;
        slot.subscription = replica.client.infer(request, options).subscribe({
          next: (event) => {
            emitted = true;
            subscriber.next(event);
          },
          error: (err: unknown) => {
            release();
            if (!isReplicaFault(err)) return subscriber.error(err);
            this.markDown(replica);
            if (emitted) return subscriber.error(err);
            lastError = err;
            tryNext();
          },
          complete: () => {
            release();
            this.markUp(replica);
            subscriber.complete();
          },
        });
      };
      tryNext();
      return () => {
        current?.subscription?.unsubscribe();
        release();
      };
    });
  }

  /**
   * A pass-through call on the same terms as `infer`: a replica serving the
   * model, by affinity with bounded load, the next one only when this one
   * failed before answering (no byte of its answer reached the client). The
   * replica counts as busy until the caller has read the body.
   */
  async relay(call: RelayCall): Promise<RelayBody> {
    let lastError: unknown;
    for (const replica of this.candidates(call.affinityKey, call.model)) {
      if (!canRelay(replica.client)) throw new UpstreamUnavailableError('This upstream client cannot pass calls through.', 'upstream_unavailable');
      replica.outstanding++;
      replica.served++;
      let released = false;
      const release = () => {
        if (!released) replica.outstanding--;
        released = true;
      };
      try {
        const body = await replica.client.relay(call);
        this.markUp(replica);
        return {
          status: body.status,
          contentType: body.contentType,
          json: () => body.json().finally(release),
          text: (onText) => body.text(onText).finally(release),
        };
      } catch (err) {
        release();
        if (!isReplicaFault(err) || call.signal?.aborted) throw err;
        this.markDown(replica);
        lastError = err;
      }
    }
    throw lastError ?? new UpstreamUnavailableError('No upstream replica is available for this model.', 'upstream_unavailable');
  }

  async listModels(signal?: AbortSignal): Promise<ModelInfo[]> {
    const lists = await Promise.allSettled(this.usable().map((r) => r.client.listModels(signal)));
    const byId = new Map<string, ModelInfo>();
    for (const list of lists) if (list.status === 'fulfilled') for (const model of list.value) if (!byId.has(model.id)) byId.set(model.id, model);
    if (byId.size === 0) {
      const failed = lists.find((l): l is PromiseRejectedResult => l.status === 'rejected');
      if (failed) throw failed.reason;
    }
    return [...byId.values()];
  }

  /**
   * Counted by one replica serving the model (every replica of a model has
   * its tokenizer), the next one on a replica fault; null when the replicas'
   * clients cannot tokenize or their servers have no `/tokenize`.
   */
  async tokenize(request: TokenizeRequest, signal?: AbortSignal): Promise<number | null> {
    const usable = this.usable();
    const serving = usable.filter((r) => r.models === null || r.models.size === 0 || r.models.has(request.model));
    let lastError: unknown;
    for (const replica of serving.length > 0 ? serving : usable) {
      if (!replica.client.tokenize) return null;
      try {
        return await replica.client.tokenize(request, signal);
      } catch (err) {
        if (!isReplicaFault(err)) throw err;
        this.markDown(replica);
        lastError = err;
      }
    }
    throw lastError;
  }

  /** Ready when any replica answers. */
  async probe(signal?: AbortSignal): Promise<void> {
    const results = await Promise.allSettled(this.replicas.map((r) => r.client.probe(signal)));
    if (results.some((r) => r.status === 'fulfilled')) return;
    throw (results[0] as PromiseRejectedResult).reason;
  }

  close(): void {
    clearInterval(this.timer);
    for (const replica of this.replicas) replica.client.close?.();
  }

  /**
   * Replicas to try, in order: healthy ones serving the model, the affine one
   * first unless it carries more than its share, then the rest by affinity
   * score; unhealthy ones last (their health may have come back unseen).
   */
  private candidates(key: string, model: string): Replica[] {
    const serving = this.replicas.filter((r) => r.models === null || r.models.size === 0 || r.models.has(model));
    const pool = serving.length > 0 ? serving : this.replicas;
    const ranked = pool
      .map((replica) => ({ replica, score: score(key, replica.url) }))
      .sort((a, b) => (a.score === b.score ? 0 : a.score > b.score ? -1 : 1))
      .map((entry) => entry.replica);
    const healthy = ranked.filter((r) => r.healthy);
    const down = ranked.filter((r) => !r.healthy).sort((a, b) => a.retryAt - b.retryAt);
    if (healthy.length > 1) {
      const total = healthy.reduce((sum, r) => sum + r.outstanding, 0);
      const bound = Math.ceil((LOAD_FACTOR * (total + 1)) / healthy.length);
      const index = healthy.findIndex((r) => r.outstanding + 1 <= bound);
      if (index > 0) {
        // The affine replica is over its bound: the least loaded takes the request.
        const least = healthy.reduce((a, b) => (b.outstanding < a.outstanding ? b : a));
        healthy.splice(healthy.indexOf(least), 1);
        healthy.unshift(least);
      }
    }
    return [...healthy, ...down];
  }

  private usable(): Replica[] {
    const healthy = this.replicas.filter((r) => r.healthy);
    return healthy.length > 0 ? healthy : this.replicas;
  }

  private markDown(replica: Replica): void {
    replica.healthy = false;
    replica.failures++;
    const min = this.options.minBackoffMs ?? Math.min(500, this.options.healthCheckMs);
    replica.retryAt = Date.now() + Math.min(this.options.healthCheckMs * 6, min * 2 ** (replica.failures - 1));
  }

  private markUp(replica: Replica): void {
    replica.healthy = true;
    replica.failures = 0;
    replica.retryAt = 0;
  }

  /** Probes each replica due for it: healthy ones every period, failed ones when their backoff ends. */
  private async checkHealth(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const now = Date.now();
      await Promise.all(
        this.replicas
          .filter((r) => r.healthy || r.retryAt <= now)
          .map(async (replica) => {
            const signal = AbortSignal.timeout(Math.max(1_000, this.options.healthCheckMs));
            try {
              const models = await replica.client.listModels(signal);
              replica.models = new Set(models.map((m) => m.id));
              this.markUp(replica);
            } catch {
              this.markDown(replica);
            }
          }),
      );
    } finally {
      this.checking = false;
    }
  }
}
