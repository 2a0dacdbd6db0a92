import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REGISTER = fileURLToPath(new URL('./support/process/ts-register.mjs', import.meta.url));
const CHILD = fileURLToPath(new URL('./support/process/idle-stream-heap.child.ts', import.meta.url));

/** Streams held at 10x and 100x. */
const FEW = 10;
const MANY = 100;
/**
 * What the gateway may keep per idle open stream: its exchange with the
 * client, the run waiting on its model and its upstream request. Read as
 * the heap per stream held through the gateway less the heap per stream
 * held straight against the simulated upstream, measured the same way in
 * one fresh process (the simulator's exchange and the client's request are
 * in both). Measured there (Node 20): 63.7 KiB when the run was a chain of
 * standard RxJS operators, each keeping its own subscriber and closures
 * while it waits (`94b3bb5`), and 48.2-48.4 KiB with the run's stages as
 * the relays of `libs/core/loop/run-operators.ts` (the round keeps its fold
 * of standard operators, `scan` over `roundReducer`). The bound sits
 * between the two.
 */
const MAX_GATEWAY_BYTES_PER_STREAM = 58 * 1024;

interface Held {
  /** Bytes per stream of the heap's growth from FEW to MANY streams. */
  perStream: number;
  /** The heap once every stream closed, less the heap at FEW. */
  keptAfterClose: number;
  /** Upstream requests open at MANY. */
  activeAtMany: number;
}

/** The measurement, in a fresh process of its own (`idle-stream-heap.child.ts` says why). */
function measure(): Promise<{ direct: Held; through: Held }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', REGISTER, CHILD, String(FEW), String(MANY)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`the heap probe exited ${code}: ${err}`))));
  });
}

/**
 * Idle open streams, grown 10x and 100x: what each keeps while it waits on
 * its model is read as the heap's growth from 10 to 100 streams, so that
 * what the first streams make once (compiled code, pooled buffers, lazily
 * made module state) is not counted. A run that holds a chain of operators
 * per stream (the regression this guards) shows up as bytes per stream;
 * closing every stream gives the heap back.
 */
describe('Idle open streams, 10x and 100x (memory per stream)', () => {
  it(`keeps under ${MAX_GATEWAY_BYTES_PER_STREAM / 1024} KiB per idle stream in the gateway, and lets it go once the streams close`, async () => {
    const { direct, through } = await measure();
    const gatewayShare = through.perStream - direct.perStream;
    console.log(
      `idle open streams, heap per stream: ${(through.perStream / 1024).toFixed(1)} KiB through the gateway, ` +
        `${(direct.perStream / 1024).toFixed(1)} KiB straight to the upstream, the gateway's share ${(gatewayShare / 1024).toFixed(1)} KiB`,
    );
    // Every stream was open upstream at once, both ways.
    expect(direct.activeAtMany).toBe(MANY);
    expect(through.activeAtMany).toBe(MANY);
    expect(direct.perStream).toBeGreaterThan(0);
    expect(gatewayShare).toBeGreaterThan(0);
    expect(gatewayShare).toBeLessThan(MAX_GATEWAY_BYTES_PER_STREAM);
    // What 100 streams held is given back (up to what 10 of them would hold).
    expect(through.keptAfterClose).toBeLessThan(FEW * through.perStream);
  }, 60_000);
});
