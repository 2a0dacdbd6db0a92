import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { writeHeapSnapshot } from 'node:v8';

/**
 * Child side of `ChildService`: report readiness and answer the parent's
 * calls. `stop` runs the given shutdown and exits with code 0, which is
 * what lets `--cpu-prof` write its profile.
 */
export type Handlers = Record<string, (arg: unknown) => unknown>;

interface CallMessage {
  type: 'call';
  id: number;
  cmd: string;
  arg?: unknown;
}

export function childConfig<T>(): T {
  return JSON.parse(process.argv[2] ?? '{}') as T;
}

export function serveParent(url: string, handlers: Handlers, shutdown: () => Promise<void>): void {
  if (!process.send) throw new Error('Start this script through bench/run.js (it needs an IPC channel).');
  const all: Handlers = {
    memory: (arg) => {
      const gc = (globalThis as { gc?: () => void }).gc;
      if ((arg as { gc?: boolean } | undefined)?.gc && gc) {
        // Twice: the first pass can leave objects that finalizers just released.
        gc();
        gc();
      }
      return process.memoryUsage();
    },
    // CPU time (user + system, µs) spent so far: per-request cost that other load on the machine does not distort.
    cpu: () => process.cpuUsage(),
    // For leak hunts: compare two snapshots taken some traffic apart.
    'heap-snapshot': (arg) => writeHeapSnapshot((arg as { path?: string } | undefined)?.path),
    // Where the garbage comes from: sampled allocations, those the scavenger already collected included.
    'alloc-sampling-start': (arg) => allocationSampling.start((arg as { promotedOnly?: boolean } | undefined)?.promotedOnly ?? false),
    'alloc-sampling-stop': (arg) => allocationSampling.stop((arg as { path: string }).path),
    // Where the CPU goes during one measured load only (`--cpu-prof` also profiles the start-up).
    'cpu-profile-start': () => cpuProfiling.start(undefined),
    'cpu-profile-stop': (arg) => cpuProfiling.stop((arg as { path: string }).path),
    ...handlers,
  };
  process.on('message', async (message: CallMessage) => {
    if (message?.type !== 'call') return;
    if (message.cmd === 'stop') {
      await shutdown().catch(() => undefined);
      process.exit(0);
    }
    try {
      const handler = all[message.cmd];
      if (!handler) throw new Error(`unknown command "${message.cmd}"`);
      process.send!({ type: 'reply', id: message.id, result: await handler(message.arg) });
    } catch (err) {
      process.send!({ type: 'reply', id: message.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
  // The parent going away (crash, Ctrl-C) must not leave this server running.
  process.on('disconnect', () => {
    void shutdown().finally(() => process.exit(0));
  });
  process.send({ type: 'ready', url });
}

/**
 * A profile the parent starts and stops over the inspector, written to the
 * path it names: `begin` enables and starts the profiler on a fresh session,
 * `end` is the inspector method that stops it and answers with `{ profile }`.
 */
function inspectorWindow<A = void>(name: string, begin: (session: Session, options: A) => Promise<void>, end: string) {
  let session: Session | undefined;
  return {
    async start(options: A): Promise<void> {
      session = new Session();
      session.connect();
      await begin(session, options);
    },
    async stop(path: string): Promise<void> {
      if (!session) throw new Error(`${name}-start first`);
      const { profile } = (await session.post(end as never)) as unknown as { profile: unknown };
      session.disconnect();
      session = undefined;
      writeFileSync(path, JSON.stringify(profile));
    },
  };
}

/**
 * V8's sampling heap profiler over the inspector, keeping the samples of
 * objects already collected (`--heap-prof` keeps only the live ones, which
 * says nothing about per-request garbage). With `promotedOnly`, objects the
 * young-generation GC collected are left out: what remains outlived a
 * scavenge or two and was promoted, the garbage that costs old-space marking.
 * The profile is written as a `.heapprofile` that DevTools and
 * `bench/alloc-summary` read.
 */
const allocationSampling = inspectorWindow<boolean>(
  'alloc-sampling',
  async (session, promotedOnly) => {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: !promotedOnly,
    } as never);
  },
  'HeapProfiler.stopSampling',
);

/**
 * V8's CPU profiler over the inspector for a window the parent chooses (one
 * case's measured load), written as a `.cpuprofile` that DevTools and
 * `bench/profile-summary` read.
 */
const cpuProfiling = inspectorWindow(
  'cpu-profile',
  async (session) => {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  },
  'Profiler.stop',
);
