import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChildService } from './lib/child-service.js';
import { diffHeapSnapshots, type HeapGroup } from './lib/heap-snapshot-diff.js';
import type { HeldStream } from './lib/load-generator.js';
import { STREAM_VARIANTS, holdStreams, warmUpStreaming } from './scenarios/memory.scenario.js';
import { arg } from './lib/flags.js';

/**
 * `npm run build && node dist/bench/idle-stream-heap.bench.js [flags]`: where
 * the memory of an open, idle stream goes. A bench gateway (SQLite, default
 * config) is warmed up, snapshotted, given N streams that sit after
 * `response.created` (the memory bench's `idle` variant), and snapshotted
 * again; what is new in the second snapshot is grouped per stream by kind and
 * constructor, and closures with their contexts by the package or gateway
 * file that made them. The memory bench measures the total (`--only=memory`);
 * this names its parts, for before/after work on what a run keeps in flight.
 * A third table names the objects that grew properties after construction,
 * went into dictionary mode or hold boxed doubles, by constructor.
 *
 *   --streams=N    streams held (default 300)
 *   --top=N        rows per table (default 30)
 *   --dist=DIR     another build's `dist` to run as the gateway (default this one)
 *   --variant=idle|trickle  the streams' upstream behaviour (default idle)
 */
const STREAMS = Number(arg('streams') ?? 300);
const TOP = Number(arg('top') ?? 30);
const DIST = arg('dist');
const VARIANT = (arg('variant') ?? 'idle') as keyof typeof STREAM_VARIANTS;

function table(title: string, groups: HeapGroup[], streams: number): string {
  const rows = groups.slice(0, TOP).map((g) => `| ${g.key} | ${(g.bytes / streams).toFixed(0)} | ${(g.count / streams).toFixed(1)} |`);
  return [`### ${title}`, '', '| what | bytes per stream | objects per stream |', '| --- | --- | --- |', ...rows].join('\n');
}

async function main(): Promise<void> {
  if (!(VARIANT in STREAM_VARIANTS)) throw new Error(`--variant must be one of ${Object.keys(STREAM_VARIANTS).join(', ')}`);
  const dir = mkdtempSync(join(os.tmpdir(), 'sy-heap-'));
  const sim = await ChildService.start('simulator', { script: 'simulator-child.js' });
  const gateway = await ChildService.start('gateway', {
    script: DIST ? join(DIST, 'bench/bench-gateway.js') : 'bench-gateway.js',
    config: { upstreamUrl: sim.url, sqlitePath: join(dir, 'state.sqlite'), maxSockets: STREAMS + 64, idleMs: 600_000 },
    execArgv: ['--expose-gc'],
    startTimeoutMs: 120_000,
  });
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const held: HeldStream[] = [];
  try {
    await warmUpStreaming(gateway.url);
    const before = join(dir, 'before.heapsnapshot');
    const after = join(dir, 'after.heapsnapshot');
    await gateway.call('heap-snapshot', { path: before }, 300_000);
    const opened = await holdStreams(agent, gateway.url, VARIANT, STREAMS, held);
    await sleep(1000);
    await gateway.call('heap-snapshot', { path: after }, 300_000);
    const diff = diffHeapSnapshots(before, after);
    const closures = diff.closuresByOrigin.reduce((sum, g) => sum + g.bytes, 0);
    console.log(
      [
        `Run ${new Date().toISOString()}, Node ${process.version}, ${opened}/${STREAMS} ${VARIANT} streams open${DIST ? `, gateway from ${DIST}` : ''}`,
        '',
        `New in the heap per stream: ${(diff.newBytes / STREAMS / 1024).toFixed(1)} KiB in ${(diff.newObjects / STREAMS).toFixed(0)} objects; ` +
          `closures with their contexts ${(closures / STREAMS / 1024).toFixed(1)} KiB of it.`,
        '',
        table('By kind', diff.byKind, STREAMS),
        '',
        table('Closures and their contexts, by where they were defined', diff.closuresByOrigin, STREAMS),
        '',
        table('Property stores, dictionaries and heap numbers, by the object that owns them', diff.storesByOwner, STREAMS),
      ].join('\n'),
    );
  } finally {
    for (const stream of held) stream.abort();
    await gateway.stop().catch(() => undefined);
    await sim.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
