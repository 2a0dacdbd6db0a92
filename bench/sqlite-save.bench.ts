import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, round } from './lib/stats.js';

/**
 * `npm run build && node dist/bench/sqlite-save.bench.js [--vs=DIR] [--rounds=N] [--saves=N]`:
 * CPU of the SQLite state store's write path alone, in this one process (no
 * HTTP, so a busy machine's noise is far smaller than in a whole request):
 * N (default 20 000) `saveResponse` calls of a small response into a fresh
 * file, 16 in flight at a time (what c=16 gives the group commit), CPU µs per
 * save. Ids are made by the build's own `newId`, as the gateway makes them:
 * where they land in the indexes is much of a save's cost, and that cost grows
 * with the file. With `--vs=DIR` the store and ids of another build
 * (`DIR/libs/storage/sqlite/sqlite-state-store.js`, `DIR/libs/tool-sdk/ids.js`)
 * run in the same rounds, interleaved: before/after.
 */
interface Store {
  init(): Promise<void>;
  close(): Promise<void>;
  saveResponse(r: unknown): Promise<void>;
}
type StoreClass = new (options: { path: string }) => Store;
type NewId = (prefix: string) => string;
interface Build {
  Store: StoreClass;
  newId: NewId;
}

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const ROUNDS = Number(arg('rounds') ?? 5);
const SAVES = Number(arg('saves') ?? 20_000);
const IN_FLIGHT = 16;

/** A response as the gateway stores one, its ids made by the build's own `newId`: the stores index them, so their order is part of a save's cost. */
function record(newId: NewId) {
  const id = newId('resp');
  const message = { id: newId('msg'), type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'word '.repeat(20), annotations: [] }] };
  return {
    id,
    owner: null,
    createdAt: 1,
    previousResponseId: null,
    conversationId: null,
    status: 'completed',
    response: { id, object: 'response', status: 'completed', model: 'bench', output: [message], usage: { input_tokens: 5, output_tokens: 20 } },
    inputItems: [{ id: newId('msg'), type: 'message', role: 'user', content: '[[tokens 20]]' }],
    modelItems: [message],
    tools: [],
    toolChoice: 'auto',
  };
}

async function cpuPerSave({ Store, newId }: Build, path: string): Promise<number> {
  const store = new Store({ path });
  await store.init();
  try {
    let next = 0;
    const worker = async () => {
      while (next++ < SAVES) await store.saveResponse(record(newId));
    };
    await Promise.all(Array.from({ length: 50 }, () => store.saveResponse(record(newId))));
    const before = process.cpuUsage();
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    const used = process.cpuUsage(before);
    return (used.user + used.system) / SAVES;
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), 'sy-save-'));
  const load = async (root: string): Promise<Build> => ({
    Store: ((await import(pathToFileURL(join(root, 'libs/storage/sqlite/sqlite-state-store.js')).href)) as { SqliteStateStore: StoreClass }).SqliteStateStore,
    newId: ((await import(pathToFileURL(join(root, 'libs/tool-sdk/ids.js')).href)) as { newId: NewId }).newId,
  });
  const builds: Array<[string, Build]> = [['A', await load(new URL('..', import.meta.url).pathname)]];
  const vs = arg('vs');
  if (vs) builds.push(['B', await load(vs)]);
  const samples = new Map<string, number[]>(builds.map(([label]) => [label, []]));
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const [label, build] of builds) samples.get(label)!.push(await cpuPerSave(build, join(dir, `${label}${r}.sqlite`)));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `Run ${new Date().toISOString()}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; ${ROUNDS} rounds of ${SAVES} saves, ${IN_FLIGHT} in flight`,
  );
  for (const [label] of builds)
    console.log(
      `${label}: ${round(median(samples.get(label)!))} µs CPU per save [${samples
        .get(label)!
        .map((v) => round(v))
        .join(', ')}]`,
    );
  if (vs) console.log(`A/B: ${round(median(samples.get('A')!) / median(samples.get('B')!))}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
