// `--import` this (through NODE_OPTIONS) to learn what a process's main
// thread loaded: every URL its ES module loader resolved, every CommonJS
// module in its require cache, and whether `Array.prototype.push` is still
// V8's own. SIGUSR2 or SIGWINCH writes them as JSON to $MODULE_RECORD
// (SIGUSR2 is among the signals Nest's shutdown hooks stop the gateway on;
// SIGWINCH is not, for a record taken midway). Worker threads
// record nothing: the question is what the event loop's thread carries.
import { writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { isMainThread, MessageChannel } from 'node:worker_threads';

if (isMainThread && process.env.MODULE_RECORD) {
  const resolved = new Set();
  const { port1, port2 } = new MessageChannel();
  port1.on('message', (url) => resolved.add(url));
  port1.unref();
  register('./module-recorder.hooks.mjs', { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
  const require = createRequire(import.meta.url);
  const write = () => {
    writeFileSync(
      process.env.MODULE_RECORD,
      JSON.stringify({
        modules: [...resolved, ...Object.keys(require.cache)],
        pushIsNative: Function.prototype.toString.call(Array.prototype.push).includes('[native code]'),
        parseIsNative: Function.prototype.toString.call(JSON.parse).includes('[native code]'),
      }),
    );
  };
  process.on('SIGUSR2', write);
  process.on('SIGWINCH', write);
}
