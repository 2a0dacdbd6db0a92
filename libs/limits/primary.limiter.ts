import type { Worker } from 'node:cluster';
import { callPrimary, notifyPrimary, type PrimaryService } from '#core/cluster/primary-channel.js';
import { RateLimitError, UnavailableError } from '#tool-sdk/errors.js';
import type { AdmissionCost, RequestLease, RequestLimiter } from '#core/loop/request-limiter.interface.js';
import type { Usage } from '#tool-sdk/items.js';
import type { LimitsSettings } from './limits.settings.js';
import { MemoryLimiter } from './memory.limiter.js';

/** The primary service's name in worker mode (see `#core/cluster/primary-channel.js`). */
export const LIMITS_SERVICE = 'limits';

type LimitsCall = { op: 'acquire'; owner: string | null; cost?: AdmissionCost } | { op: 'release'; lease: number; tokens: number } | { op: 'check'; lease: number; tokens: number };
type AcquireAnswer = { lease: number } | { refused: { message: string; retryAfter: number; headers?: Record<string, string> } };

/**
 * In the primary of worker mode: one `MemoryLimiter` for every worker, so
 * that an owner's places and minute counts are the gateway's, not a
 * process's. A worker that dies gives back the places it held, and the
 * token reservations of its unfinished requests (they are charged nothing:
 * what they used is not known).
 */
export function limitsPrimaryService(settings: LimitsSettings, now: () => number = Date.now): PrimaryService {
  const limiter = new MemoryLimiter(settings, now);
  const leases = new Map<number, { lease: RequestLease; worker: number }>();
  let nextLease = 1;
  return {
    async handle(payload: unknown, worker: Worker): Promise<AcquireAnswer | { ok: true } | null> {
      const call = payload as LimitsCall;
      if (call.op === 'check') {
        try {
          await leases.get(call.lease)?.lease.check?.({ total_tokens: call.tokens } as Usage);
          return { ok: true };
        } catch (err) {
          return refusalOf(err);
        }
      }
      if (call.op === 'release') {
        const held = leases.get(call.lease);
        leases.delete(call.lease);
        held?.lease.release(call.tokens > 0 ? ({ total_tokens: call.tokens } as Usage) : null);
        return null;
      }
      try {
        const lease = await limiter.acquire(call.owner, call.cost);
        const id = nextLease++;
        leases.set(id, { lease, worker: worker.id });
        return { lease: id };
      } catch (err) {
        return refusalOf(err);
      }
    },
    workerExited(worker: Worker): void {
      for (const [id, held] of leases) {
        if (held.worker !== worker.id) continue;
        leases.delete(id);
        held.lease.release(null);
      }
    },
  };
}

/** A refusal as it crosses the cluster channel (anything else is rethrown). */
function refusalOf(err: unknown): AcquireAnswer {
  if (!(err instanceof RateLimitError)) throw err;
  const { 'retry-after': retryAfter, ...headers } = err.headers;
  return { refused: { message: err.message, retryAfter: Number(retryAfter), headers } };
}

function refusalError(refused: { message: string; retryAfter: number; headers?: Record<string, string> }): RateLimitError {
  const refusal = new RateLimitError(refused.message, 'rate_limit_exceeded', refused.retryAfter);
  Object.assign(refusal.headers, refused.headers);
  return refusal;
}

/**
 * In a worker: the limits counted by the primary (`limitsPrimaryService`),
 * one question per admission over the cluster channel. Exact across the
 * workers of one gateway; several replicas share counts through Redis
 * (`limits.redisUrl`) instead.
 */
export class PrimaryLimiter implements RequestLimiter {
  async acquire(owner: string | null, cost?: AdmissionCost): Promise<RequestLease> {
    let answer: AcquireAnswer;
    try {
      // The primary checks and reserves the estimate in one step, so workers admitting at once never overspend together.
      answer = await callPrimary<AcquireAnswer>(LIMITS_SERVICE, { op: 'acquire', owner, cost } satisfies LimitsCall);
    } catch (err) {
      throw new PrimaryLimitsUnavailableError((err as Error).message);
    }
    if ('refused' in answer) throw refusalError(answer.refused);
    let released = false;
    return {
      release: (usage: Usage | null) => {
        if (released) return;
        released = true;
        void notifyPrimary(LIMITS_SERVICE, { op: 'release', lease: answer.lease, tokens: usage?.total_tokens ?? 0 } satisfies LimitsCall);
      },
      check: async (spent: Usage) => {
        if (released) return;
        let verdict: { ok: true } | AcquireAnswer;
        try {
          verdict = await callPrimary<{ ok: true } | AcquireAnswer>(LIMITS_SERVICE, { op: 'check', lease: answer.lease, tokens: spent.total_tokens ?? 0 } satisfies LimitsCall);
        } catch (err) {
          throw new PrimaryLimitsUnavailableError((err as Error).message);
        }
        if ('refused' in verdict) throw refusalError(verdict.refused);
      },
    };
  }
}

/** The primary did not answer: refusing is safer than admitting without limits. */
export class PrimaryLimitsUnavailableError extends UnavailableError {
  constructor(detail: string) {
    super(`The rate limiter is unavailable (${detail}); try again shortly.`, 'limits_unavailable', 1);
  }
}
