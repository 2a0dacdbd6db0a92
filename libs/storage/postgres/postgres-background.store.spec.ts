import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { backgroundRun, describeBackgroundStoreContract } from '../testing/background-store.contract.js';
import { PostgresBackgroundStore } from './postgres-background.store.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const runTag = randomBytes(4).toString('hex');
const schemas: string[] = [];
let admin: pg.Pool;

const freshSchema = (): string => {
  const schema = `sy_bg_${runTag}_${schemas.length}`;
  schemas.push(schema);
  return schema;
};

beforeAll(async () => {
  admin = new pg.Pool({ connectionString: url, max: 2 });
  admin.on('error', () => undefined);
  await admin.query('SELECT 1');
});

afterAll(async () => {
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});

describeBackgroundStoreContract('postgres', () => new PostgresBackgroundStore({ connectionString: url, schema: freshSchema() }));

describe('PostgresBackgroundStore', () => {
  it('notifies a second replica of appends and cancels through LISTEN/NOTIFY', async () => {
    const schema = freshSchema();
    const a = new PostgresBackgroundStore({ connectionString: url, schema });
    const b = new PostgresBackgroundStore({ connectionString: url, schema });
    await Promise.all([a.init(), b.init()]);
    try {
      const run = backgroundRun();
      await a.admit(run, { maxRuns: 10, maxRunsPerOwner: 10 });
      const seen: string[] = [];
      const twice = new Promise<void>((resolve) => {
        b.watch((id, ended) => {
          seen.push(`${id}:${ended}`);
          if (seen.length === 2) resolve();
        });
      });
      await a.append(run.id, { events: [{ sequence: 0, event: { type: 'response.in_progress' } }], response: {}, status: 'in_progress' });
      await a.cancel(run.id, 'owner-a', (r) => ({ ...r, status: 'cancelled' }));
      await twice;
      expect(seen).toEqual([`${run.id}:false`, `${run.id}:true`]);
      expect((await b.get(run.id, 'owner-a'))?.status).toBe('cancelled');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('admits atomically across replicas: concurrent admissions never exceed the limit', async () => {
    const schema = freshSchema();
    const replicas = [0, 1, 2].map(() => new PostgresBackgroundStore({ connectionString: url, schema }));
    await Promise.all(replicas.map((r) => r.init()));
    try {
      const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => replicas[i % 3].admit(backgroundRun(), { maxRuns: 5, maxRunsPerOwner: 100 })));
      expect(outcomes.filter((o) => o === null)).toHaveLength(5);
      expect(outcomes.filter((o) => o === 'total')).toHaveLength(7);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
  });
});
