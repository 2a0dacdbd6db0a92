import { newId } from '#tool-sdk/ids.js';
import { PostgresStateStore } from '#storage/postgres/postgres-state-store.js';
import { crashRecord } from './save-loop.js';

/**
 * A process that stores responses in waves of 16 concurrent saves, so that they are group-committed,
 * in the PostgreSQL schema named by argv[3] of the database at argv[2], and prints each id once its
 * save has resolved: what the gateway promises a client when the terminal event goes out. The crash
 * test kills it with SIGKILL and checks that every printed id is stored.
 */
const store = new PostgresStateStore({ connectionString: process.argv[2], schema: process.argv[3], maxConnections: 4 });
await store.init();
process.stdout.write('ready\n');
const save = async (): Promise<void> => {
  const id = newId('resp');
  await store.saveResponse(crashRecord(id));
  process.stdout.write(`${id}\n`);
};
for (;;) await Promise.all(Array.from({ length: 16 }, save));
