import cluster, { type Worker } from 'node:cluster';

/**
 * Worker mode's one protocol between a worker and the primary, over the
 * cluster IPC channel. A worker calls a named service the primary offers and
 * gets one answer back (`callPrimary`), or tells it something and expects no
 * answer (`notifyPrimary`). The primary lists the services it runs in the
 * workers' environment (`SWITCHYARD_PRIMARY_SERVICES`), so that a library
 * loaded in some other program's cluster worker never waits on a primary
 * that is not there (`primaryOffers`).
 *
 * Messages are plain JSON objects tagged `switchyard`: `{ switchyard: 'call',
 * id, service, payload }` from a worker (id 0: no answer wanted), and
 * `{ switchyard: 'reply', id, ok, result | error }` from the primary.
 * prom-client's own cluster messages share the channel and are told apart by
 * their `type`.
 */
export const PRIMARY_SERVICES_ENV = 'SWITCHYARD_PRIMARY_SERVICES';

const TAG = 'switchyard';

interface CallMessage {
  [TAG]: 'call';
  id: number;
  service: string;
  payload: unknown;
}

interface ReplyMessage {
  [TAG]: 'reply';
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

/** Whether this process is a worker whose primary runs `service`. */
export function primaryOffers(service: string): boolean {
  if (!cluster.isWorker || typeof process.send !== 'function') return false;
  return (process.env[PRIMARY_SERVICES_ENV] ?? '').split(',').includes(service);
}

/** The primary could not answer: it is gone, or took longer than the deadline. */
export class PrimaryUnavailableError extends Error {}

let nextId = 1;
const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void; timer: NodeJS.Timeout }>();
let listening = false;

function listen(): void {
  if (listening) return;
  listening = true;
  process.on('message', (message: unknown) => {
    const reply = message as ReplyMessage;
    if (!reply || reply[TAG] !== 'reply') return;
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    clearTimeout(waiter.timer);
    if (reply.ok) waiter.resolve(reply.result);
    else waiter.reject(new Error(reply.error ?? 'the primary failed'));
  });
}

/** Asks the primary's `service` and resolves with its answer. */
export function callPrimary<T>(service: string, payload: unknown, timeoutMs = 5_000): Promise<T> {
  listen();
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new PrimaryUnavailableError(`the primary did not answer ${service} within ${timeoutMs} ms`));
    }, timeoutMs);
    timer.unref();
    pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
    const message: CallMessage = { [TAG]: 'call', id, service, payload };
    const sent = process.send?.(message, undefined, undefined, (err) => {
      if (!err) return;
      pending.delete(id);
      clearTimeout(timer);
      reject(new PrimaryUnavailableError(`the primary is unreachable: ${err.message}`));
    });
    if (sent === undefined) {
      pending.delete(id);
      clearTimeout(timer);
      reject(new PrimaryUnavailableError('not a cluster worker'));
    }
  });
}

/** Tells the primary's `service` something; resolves once the message is handed to the channel. */
export function notifyPrimary(service: string, payload: unknown): Promise<void> {
  return new Promise((resolve) => {
    const message: CallMessage = { [TAG]: 'call', id: 0, service, payload };
    if (!process.send?.(message, undefined, undefined, () => resolve())) resolve();
  });
}

/** One service of the primary: its answer to a call, and what it does when a worker is gone. */
export interface PrimaryService {
  handle(payload: unknown, worker: Worker): unknown;
  /** A worker exited: whatever it held (places under a limit, ...) is let go. */
  workerExited?(worker: Worker): void;
}

/**
 * In the primary: answers the workers' calls to these services. Returns the
 * names, for `SWITCHYARD_PRIMARY_SERVICES` in the workers' environment.
 */
export function servePrimary(services: Record<string, PrimaryService>): string[] {
  cluster.on('message', (worker: Worker, message: unknown) => {
    const call = message as CallMessage;
    if (!call || call[TAG] !== 'call') return;
    const service = services[call.service];
    const answer = (reply: Omit<ReplyMessage, typeof TAG | 'id'>) => {
      if (call.id !== 0 && worker.isConnected()) worker.send({ [TAG]: 'reply', id: call.id, ...reply } satisfies ReplyMessage);
    };
    if (!service) return answer({ ok: false, error: `the primary runs no service ${JSON.stringify(call.service)}` });
    Promise.resolve()
      .then(() => service.handle(call.payload, worker))
      .then(
        (result) => answer({ ok: true, result }),
        (err: unknown) => answer({ ok: false, error: err instanceof Error ? err.message : String(err) }),
      );
  });
  cluster.on('exit', (worker) => {
    for (const service of Object.values(services)) service.workerExited?.(worker);
  });
  return Object.keys(services);
}
