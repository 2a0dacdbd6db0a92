import { newId } from '#tool-sdk/ids.js';
import { SqliteStateStore } from '#storage/sqlite/sqlite-state-store.js';
import { crashRecord } from './save-loop.js';

/**
 * A process that stores responses one after another in the SQLite file
 * named by argv[2] and prints each id once its save has resolved: what the
 * gateway promises a client when the terminal event goes out. The crash
 * test kills it with SIGKILL and checks that every printed id is in the file.
 */
const store = new SqliteStateStore({ path: process.argv[2] });
await store.init();
process.stdout.write('ready\n');
// The parent takes the write lock, then says go: the first saves wait for it.
await new Promise((resolve) => process.stdin.once('data', resolve));
for (;;) {
  const id = newId('resp');
  await store.saveResponse(crashRecord(id));
  process.stdout.write(`${id}\n`);
}
