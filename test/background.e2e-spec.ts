import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { NapToolModule, napLedger } from '#core/testing/nap-tool.module.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { until } from './support/until.js';

const validator = new OpenResponsesValidator();

const nap = (name: string) => ({ type: 'nap', name }) as any;
const LIVE = new Set(['queued', 'in_progress']);
/** A long answer: 300 tokens, 40 ms apart, so the run is surely still going while the test acts on it. */
const SLOW = '[[tokens 300]] [[delay ttft=50 token=40]]';

/** Polls as a client would, recording every status and output length it sees on the way. */
async function pollToEnd(client: OpenAI, id: string): Promise<{ final: OpenAI.Responses.Response; seen: Array<{ status: string; outputs: number }> }> {
  const seen: Array<{ status: string; outputs: number }> = [];
  const final = await until(
    async () => {
      const r = await client.responses.retrieve(id);
      seen.push({ status: r.status as string, outputs: r.output.length });
      return r;
    },
    (r) => !LIVE.has(r.status as string),
    `${id} to finish`,
  );
  return { final, seen };
}

describe('background responses (openai client, simulated upstream)', () => {
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startStack({ imports: [NapToolModule] });
    client = stack.openai;
  });
  afterAll(() => stack.close());
  beforeEach(() => napLedger.reset());

  it('answers queued at once, runs through gateway tool rounds detached, and polls to completed', async () => {
    const created = await client.responses.create({
      model: 'm',
      input: 'Nap, then nap again. [[call nap_a {"ms": 20, "tag": "one"}]] [[call@2 nap_a {"ms": 700, "tag": "two"}]]',
      tools: [nap('nap_a')],
      background: true,
    });
    expect(created).toMatchObject({ status: 'queued', background: true, output: [] });
    expect(created.id).toMatch(/^resp_/);

    const { final, seen } = await pollToEnd(client, created.id);
    expect(final.status).toBe('completed');
    expect(final.background).toBe(true);
    expect(final.output.map((i) => i.type)).toEqual(['nap_call', 'nap_call', 'message']);
    expect(final.output_text).toContain('slept 700ms two');
    // Between the rounds the response was in progress with the first call's item already in its output.
    expect(seen).toContainEqual({ status: 'in_progress', outputs: 1 });
    expect(napLedger.records.map((r) => r.tag)).toEqual(['one', 'two']);
    // Stored as any response is: input items and continuation work.
    expect((await client.responses.inputItems.list(created.id)).data).toHaveLength(1);
    const next = await client.responses.create({ model: 'm', previous_response_id: created.id, input: '[[say continued]]' });
    expect(next.output_text).toBe('continued');
  });

  it('cancels a running response: the upstream request is aborted and the status stays cancelled', async () => {
    const aborted = new Promise((resolve) => stack.simulator.once('aborted', resolve));
    const created = await client.responses.create({ model: 'm', input: `Talk at length. ${SLOW}`, background: true });
    await until(
      () => client.responses.retrieve(created.id),
      (r) => r.status === 'in_progress',
      'the run to start',
    );
    await until(
      async () => stack.simulator.stats.active,
      (n) => n > 0,
      'the upstream request',
    );

    const cancelled = await client.responses.cancel(created.id);
    expect(cancelled).toMatchObject({ id: created.id, status: 'cancelled' });
    await aborted;
    expect((await client.responses.retrieve(created.id)).status).toBe('cancelled');
    // Cancelling again answers the same; it is not an error.
    expect((await client.responses.cancel(created.id)).status).toBe('cancelled');
  });

  it('refuses to cancel a finished or a foreground response, and 404s an unknown one', async () => {
    const done = await client.responses.create({ model: 'm', input: '[[say quick]]', background: true });
    await pollToEnd(client, done.id);
    await expect(client.responses.cancel(done.id)).rejects.toMatchObject({ status: 400, code: 'response_not_cancellable' });
    const foreground = await client.responses.create({ model: 'm', input: '[[say hi]]' });
    await expect(client.responses.cancel(foreground.id)).rejects.toMatchObject({ status: 400, code: 'response_not_cancellable' });
    await expect(client.responses.cancel('resp_nope')).rejects.toMatchObject({ status: 404 });
  });

  it('streams in the background: leaving does not stop the run, and starting_after resumes without loss or repeat', async () => {
    const stream = await client.responses.create({ model: 'm', input: `Stream it. [[tokens 60]] [[delay token=10]]`, background: true, stream: true });
    const first: any[] = [];
    for await (const event of stream) {
      first.push(event);
      if (first.length === 8) break; // the client goes away mid-stream
    }
    const id = first[0].response.id as string;
    expect(first[0]).toMatchObject({ type: 'response.created', sequence_number: 0, response: { status: 'queued', background: true } });
    const last = first[first.length - 1].sequence_number as number;

    const resumed: any[] = [];
    for await (const event of await client.responses.retrieve(id, { stream: true, starting_after: last })) resumed.push(event);
    const all = [...first, ...resumed];
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    for (const event of all) validator.assertEvent(event);
    expect(resumed[resumed.length - 1].type).toBe('response.completed');

    // The text the two halves carry is the whole answer, as the stored response has it.
    const text = all
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    const stored = await client.responses.retrieve(id);
    expect(stored.status).toBe('completed');
    validator.assertResponse(stored);
    expect(text).toBe(stored.output_text);

    // The SDK's own resume helper replays the stream and accumulates the same final response.
    const final = await client.responses.stream({ response_id: id, starting_after: last }).finalResponse();
    expect(final.output_text).toBe(stored.output_text);
  });

  it('deletes a background response: running ones are cancelled first, and it is gone from every route', async () => {
    const created = await client.responses.create({ model: 'm', input: SLOW, background: true });
    await until(
      async () => stack.simulator.stats.active,
      (n) => n > 0,
      'the upstream request',
    );
    const aborted = new Promise((resolve) => stack.simulator.once('aborted', resolve));
    expect(await client.responses.delete(created.id)).toMatchObject({ id: created.id, deleted: true });
    await aborted;
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.retrieve(created.id, { stream: true })).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.delete(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it('rejects what background mode cannot do, naming the field', async () => {
    await expect(client.responses.create({ model: 'm', input: 'x', background: true, store: false })).rejects.toMatchObject({
      status: 400,
      param: 'background',
    });
    await expect(client.responses.create({ model: 'm', input: 'x', background: true, previous_response_id: 'resp_missing' })).rejects.toMatchObject({
      status: 404,
      code: 'previous_response_not_found',
    });
    const foreground = await client.responses.create({ model: 'm', input: '[[say hi]]' });
    await expect(client.responses.retrieve(foreground.id, { stream: true })).rejects.toMatchObject({ status: 400, param: 'stream' });
    const background = await client.responses.create({ model: 'm', input: '[[say hi]]', background: true });
    const res = await fetch(`${stack.url}/responses/${background.id}?stream=true&starting_after=abc`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { param: 'starting_after' } });
    await expect(client.responses.retrieve('resp_unknown', { stream: true })).rejects.toMatchObject({ status: 404 });
  });
});

describe('background limits', () => {
  let stack: GatewayStack;

  beforeAll(async () => {
    stack = await startStack({ config: { state: { background: { maxRunsPerOwner: 1, maxRuns: 2 } } } });
  });
  afterAll(() => stack.close());

  it('answers 429 with Retry-After past the per-owner limit, and admits again once a run ends', async () => {
    const running = await stack.openai.responses.create({ model: 'm', input: SLOW, background: true });
    const res = await fetch(`${stack.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify({ model: 'm', input: 'x', background: true }),
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toMatchObject({ error: { type: 'rate_limit_error', code: 'too_many_background_responses', param: 'background' } });
    // Foreground requests are not counted.
    expect((await stack.openai.responses.create({ model: 'm', input: '[[say still here]]' })).output_text).toBe('still here');

    await stack.openai.responses.cancel(running.id);
    const next = await stack.openai.responses.create({ model: 'm', input: '[[say next]]', background: true });
    expect(next.status).toBe('queued');
  });
});

describe('a gateway that stops mid-run', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-bg-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('leaves its runs failed with a clear error, readable after restart (SQLite)', async () => {
    const storage = { driver: 'sqlite', sqlitePath: join(root, 'state.sqlite') };
    const first = await startStack({ config: { storage } });
    const created = await first.openai.responses.create({ model: 'm', input: SLOW, background: true });
    await until(
      () => first.openai.responses.retrieve(created.id),
      (r) => r.status === 'in_progress',
      'the run to start',
    );
    await first.close();

    const second = await startStack({ config: { storage } });
    try {
      const after = await second.openai.responses.retrieve(created.id);
      expect(after.status).toBe('failed');
      expect(after.error).toMatchObject({ code: 'server_shutdown' });
      const events: any[] = [];
      for await (const event of await second.openai.responses.retrieve(created.id, { stream: true })) events.push(event);
      expect(events[events.length - 1]).toMatchObject({ type: 'response.failed', response: { status: 'failed' } });
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    } finally {
      await second.close();
    }
  });
});
