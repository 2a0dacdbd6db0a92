// The sandbox host: one child process of the gateway, started with Node's
// permission model (read access to the Pyodide distribution and this folder
// only, no writes, no child processes). Python runs in a worker thread so that
// this thread stays free to enforce the wall-time limit: it sets Pyodide's
// interrupt buffer at the deadline and terminates the worker when the code
// ignores the interrupt (a C-level loop such as a catastrophic regex).
//
// Protocol (IPC, advanced serialization), parent → host:
//   {type: 'boot', snapshot?, makeSnapshot, wheels: [{path, data}]}  first, once
//   {type: 'run', id, code, files: [{path, data}], deletes: [path], limits}
// host → parent:
//   {type: 'snapshot', data}  when asked to make one
//   {type: 'ready', bootMs}  once Python is loaded
//   {type: 'result', id, ...}  per run
//   {type: 'fatal', message}  then the host exits: the parent recycles it
import { Worker } from 'node:worker_threads';

const send = process.send.bind(process);
const workerUrl = new URL('./pyodide-worker.mjs', import.meta.url);
const interrupt = new Int32Array(new SharedArrayBuffer(4));
const SIGINT = 2;

const boot = await new Promise((resolve) => process.once('message', resolve));
const worker = new Worker(workerUrl, {
  workerData: { interrupt, indexURL: process.argv[2], snapshot: boot.snapshot, makeSnapshot: boot.makeSnapshot, wheels: boot.wheels ?? [] },
  // The JS heap of the worker; Python's own memory is WASM memory, capped by
  // --wasm-max-mem-pages on this process.
  resourceLimits: { maxOldGenerationSizeMb: Number(process.argv[3] ?? 256) },
  stdout: true,
  stderr: true,
});
// Anything the runtime prints outside a run (warnings) is not the program's output.
worker.stdout.resume();
worker.stderr.resume();

let current = null;

function finish(message) {
  if (!current) return;
  clearTimeout(current.softTimer);
  clearTimeout(current.hardTimer);
  current = null;
  send(message);
}

function die(message) {
  send({ type: 'fatal', message }, () => process.exit(1));
  setTimeout(() => process.exit(1), 200).unref();
}

worker.on('message', (msg) => {
  if (msg.type === 'ready' || msg.type === 'snapshot') send(msg);
  else if (msg.type === 'result') finish(msg);
});
worker.on('error', (err) => {
  const reason = /memory/i.test(String(err?.message)) ? 'memory' : 'crashed';
  if (current) finish({ type: 'result', id: current.id, status: reason, stdout: '', stderr: '', message: String(err?.message ?? err), files: [], deleted: [] });
  die(`worker ${reason}: ${err?.message ?? err}`);
});
worker.on('exit', (code) => {
  if (current)
    finish({
      type: 'result',
      id: current.id,
      status: current.interrupted ? 'timeout' : 'crashed',
      stdout: '',
      stderr: '',
      message: `the interpreter stopped (exit ${code})`,
      files: [],
      deleted: [],
    });
  die(`worker exited with ${code}`);
});

process.on('message', (msg) => {
  if (msg.type !== 'run' || current) return;
  Atomics.store(interrupt, 0, 0);
  current = { id: msg.id, interrupted: false };
  const { timeoutMs, graceMs } = msg.limits;
  current.softTimer = setTimeout(() => {
    if (!current) return;
    current.interrupted = true;
    Atomics.store(interrupt, 0, SIGINT);
    current.hardTimer = setTimeout(() => {
      // The code did not return to the interpreter loop: stop the thread.
      // 'exit' then reports the timeout and this host is replaced.
      void worker.terminate();
    }, graceMs);
  }, timeoutMs);
  worker.postMessage(msg);
});
process.on('disconnect', () => process.exit(0));
