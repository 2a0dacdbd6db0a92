import { scanJsonShape } from '#responses/request/json-shape.scanner.js';
import { arg } from './lib/flags.js';

/**
 * `npm run build && node dist/bench/json-shape-scan.bench.js [--runs=N]`: how
 * the byte scan of a request body's shape (`scanJsonShape`) grows with the
 * body, over one object of 20 000, 200 000 and 2 000 000 keys. Each size is
 * the least CPU time of N runs after a warm-up (other load on the machine only
 * ever adds to a run). Read the growth column: a linear scan takes about 10x
 * per 10x the keys, a quadratic one 100x. The unit spec checks the verdicts at
 * these scales; the time is measured here, where a busy machine fails nothing.
 */

const SIZES = [20_000, 200_000, 2_000_000];
const RUNS = Number(arg('runs') ?? 5);

/** `{"k0":0,"k1":1,...}` as bytes, built as text: two million keys as an object would cost more than the scan. */
function wideBody(keys: number): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < keys; i++) parts.push(`"k${i}":${i}`);
  return Buffer.from(`{${parts.join(',')}}`);
}

/** The least user + system CPU time of `RUNS` scans of `bytes`, in milliseconds. */
function bestScanMs(bytes: Buffer): number {
  scanJsonShape(bytes, { keys: Infinity });
  let best = Infinity;
  for (let r = 0; r < RUNS; r++) {
    const start = process.cpuUsage();
    const verdict = scanJsonShape(bytes, { keys: Infinity });
    const used = process.cpuUsage(start);
    if (verdict !== null) throw new Error(`the scan refused a plain wide body: ${JSON.stringify(verdict)}`);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

function main(): void {
  console.log(`| keys | body | best CPU of ${RUNS} | per MB | growth vs previous size |`);
  console.log('| --- | --- | --- | --- | --- |');
  let previous: number | undefined;
  for (const keys of SIZES) {
    const bytes = wideBody(keys);
    const ms = bestScanMs(bytes);
    const mb = bytes.length / 2 ** 20;
    const growth = previous === undefined ? '' : `${(ms / previous).toFixed(1)}×`;
    console.log(`| ${keys} | ${mb.toFixed(1)} MB | ${ms.toFixed(2)} ms | ${(ms / mb).toFixed(2)} ms | ${growth} |`);
    previous = ms;
  }
}

main();
