import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { weatherTool } from './support/fixtures.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// A schema of this run's own, dropped afterwards, so that parallel runs on one database never meet.
const schema = `sy_e2e_${randomBytes(4).toString('hex')}`;

describe('two gateway replicas on one PostgreSQL database', () => {
  let admin: pg.Pool;
  let a: GatewayStack;
  let b: GatewayStack;

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await admin.query(`CREATE SCHEMA ${schema}`);
    } catch (e) {
      throw new Error(`PostgreSQL is not reachable at ${url} (set DATABASE_URL): ${(e as Error).message}`, { cause: e });
    }
    const storage = { driver: 'postgres', postgresUrl: `${url}?options=-c%20search_path%3D${schema}` };
    // Both start (and migrate) at once, as replicas of one deployment do.
    [a, b] = await Promise.all([startStack({ config: { storage } }), startStack({ config: { storage } })]);
  });

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('continues each other’s responses and conversations', async () => {
    const first = await a.openai.responses.create({ model: 'm', input: 'Weather? [[call get_weather {"city": "Turku"}]]', tools: [weatherTool] });
    const call = first.output.find((i) => i.type === 'function_call') as any;

    // Replica B reads what A stored, as soon as A has answered.
    expect((await b.openai.responses.retrieve(first.id)).id).toBe(first.id);
    const second = await b.openai.responses.create({
      model: 'm',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'foggy' }],
    });
    expect(second.output_text).toContain('foggy');
    const upstreamInput = (b.simulator.requests.at(-1)!.body as any).input;
    expect(upstreamInput.map((i: any) => i.type)).toEqual(['message', 'function_call', 'function_call_output']);

    const third = await a.openai.responses.create({ model: 'm', previous_response_id: second.id, input: '[[say back on A]]' });
    expect(third.output_text).toBe('back on A');
    expect((await a.openai.responses.inputItems.list(second.id)).data).toHaveLength(1);

    const conversation = await b.openai.conversations.create({ metadata: { via: 'b' } });
    await a.openai.responses.create({ model: 'm', conversation: conversation.id, input: '[[say from A]]' });
    await b.openai.responses.create({ model: 'm', conversation: conversation.id, input: '[[say from B]]' });
    const items = await a.openai.conversations.items.list(conversation.id, { order: 'asc' });
    expect(items.data).toHaveLength(4);

    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${schema}.responses`);
    expect(rows[0].n).toBe(5);
  });

  it('sends the model the same history for a chain whichever replica continues it, and forgets a deleted turn on both', async () => {
    /** The upstream `input` of continuing `previous` with `say` on `replica`. */
    const continued = async (replica: GatewayStack, previous: string, say: string) => {
      const answer = await replica.openai.responses.create({ model: 'm', previous_response_id: previous, input: `[[say ${say}]]` });
      expect(answer.output_text).toBe(say);
      return { id: answer.id, input: (replica.simulator.requests.at(-1)!.body as any).input as unknown[] };
    };
    const texts = (input: unknown[]) => input.map((item: any) => (typeof item.content === 'string' ? item.content : item.content.map((c: any) => c.text).join('')));

    const one = await a.openai.responses.create({ model: 'm', input: '[[say one]]' });
    const two = await continued(a, one.id, 'two');
    const three = await continued(a, two.id, 'three');
    // A has read this chain turn by turn; B has never seen it.
    const onA = await continued(a, three.id, 'four');
    const onB = await continued(b, three.id, 'four');
    expect(onB.input).toEqual(onA.input);
    expect(texts(onA.input)).toEqual(['[[say one]]', 'one', '[[say two]]', 'two', '[[say three]]', 'three', '[[say four]]']);

    // A turn stored by B, continued on A (which extends the chain it holds) and on B.
    const fourOnB = await continued(b, three.id, 'four b');
    const fiveOnA = await continued(a, fourOnB.id, 'five');
    const fiveOnB = await continued(b, fourOnB.id, 'five');
    expect(fiveOnA.input).toEqual(fiveOnB.input);
    expect(texts(fiveOnA.input).slice(-3)).toEqual(['[[say four b]]', 'four b', '[[say five]]']);

    // Deleted on B: neither replica shows the model that turn (or anything before it) any more.
    await b.openai.responses.delete(two.id);
    const afterA = await continued(a, fourOnB.id, 'six');
    const afterB = await continued(b, fourOnB.id, 'six');
    expect(afterA.input).toEqual(afterB.input);
    expect(texts(afterA.input)).toEqual(['[[say three]]', 'three', '[[say four b]]', 'four b', '[[say six]]']);
  });
});
