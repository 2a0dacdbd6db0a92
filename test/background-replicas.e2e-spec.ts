import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import type { GatewayStack } from './support/gateway-harness.js';
import { startProcessPair, type ProcessPair, type ReplicaProcess } from './support/process/gateway-process.js';
import { until } from './support/until.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `sy_bg_e2e_${randomBytes(4).toString('hex')}`;
const postgresUrl = `${url}?options=-c%20search_path%3D${schema}`;
const SLOW = '[[tokens 300]] [[delay ttft=50 token=40]]';
/** Short leases so that a killed replica's run is found within a second or two. */
const config = { storage: { driver: 'postgres', postgresUrl }, state: { background: { leaseMs: 600, pollMs: 200 } } };

/**
 * Replica P is a gateway process of its own (so that it can be killed as a
 * crash would), replica B runs in this process; both use one database schema.
 * P's model is a simulated upstream owned by the test, so aborts are seen here.
 */
describe('background responses across two gateway processes on one PostgreSQL database', () => {
  let admin: pg.Pool;
  let simulator: SimulatedUpstream;
  let p: ReplicaProcess;
  let b: GatewayStack;
  let pair: ProcessPair;

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: url, max: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
    pair = await startProcessPair(config);
    ({ simulator, p, b } = pair);
  }, 60_000);

  afterAll(async () => {
    await pair?.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('a run started on one process streams to completion from the other, resumed after a sequence number', async () => {
    const created = await p.openai.responses.create({ model: 'm', input: 'Count. [[tokens 40]] [[delay token=15]]', background: true });
    const events: any[] = [];
    for await (const event of await b.openai.responses.retrieve(created.id, { stream: true, starting_after: 0 })) events.push(event);
    expect(events[0].sequence_number).toBe(1);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i + 1));
    expect(events[events.length - 1]).toMatchObject({ type: 'response.completed', response: { id: created.id, status: 'completed' } });
    expect((await b.openai.responses.retrieve(created.id)).output_text).toBe((await p.openai.responses.retrieve(created.id)).output_text);
  });

  it('a cancel on one process stops the run on the other: its upstream request is aborted, followers end', async () => {
    const aborted = new Promise((resolve) => simulator.once('aborted', resolve));
    const created = await p.openai.responses.create({ model: 'm', input: `Go on. ${SLOW}`, background: true });
    await until(
      async () => simulator.stats.active,
      (n) => n > 0,
      'the upstream request of P',
    );

    const following = (async () => {
      const seen: any[] = [];
      for await (const event of await b.openai.responses.retrieve(created.id, { stream: true })) seen.push(event);
      return seen;
    })();
    await until(
      () => b.openai.responses.retrieve(created.id),
      (r) => r.status === 'in_progress',
      'B to see it running',
    );

    expect((await b.openai.responses.cancel(created.id)).status).toBe('cancelled');
    await aborted;
    const seen = await following;
    expect(seen[0].type).toBe('response.created');
    expect(seen.some((e) => e.type === 'response.completed')).toBe(false);
    expect((await p.openai.responses.retrieve(created.id)).status).toBe('cancelled');
  });

  it('a process killed mid-run leaves its response failed, found by the other when the lease lapses', async () => {
    const created = await p.openai.responses.create({ model: 'm', input: `Long. ${SLOW}`, background: true });
    await until(
      () => b.openai.responses.retrieve(created.id),
      (r) => r.status === 'in_progress',
      'the run to start',
    );
    await p.kill();

    const failed = await until(
      () => b.openai.responses.retrieve(created.id),
      (r) => r.status !== 'in_progress',
      'the lease to lapse',
    );
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ code: 'server_error', message: expect.stringContaining('stopped before it finished') });
    const events: any[] = [];
    for await (const event of await b.openai.responses.retrieve(created.id, { stream: true })) events.push(event);
    expect(events[events.length - 1]).toMatchObject({ type: 'response.failed' });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  });
});
