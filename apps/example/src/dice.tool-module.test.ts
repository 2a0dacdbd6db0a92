// The plugin's own test, as its project runs it: `node --test dist/dice.tool-module.test.js`, with
// nothing installed beside the gateway package (test/plugin-project.e2e-spec.ts runs it so).
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ToolTestGateway } from 'switchyard-gateway/testing';
import { DiceToolModule } from './dice.tool-module.js';

describe('the dice tool type', () => {
  let gateway: ToolTestGateway;
  before(async () => {
    gateway = await ToolTestGateway.start({ toolModules: [DiceToolModule] });
  });
  after(() => gateway.close());

  it('rolls when the model calls it, and the model answers after reading the roll', async () => {
    const { status, body } = await gateway.create({ input: 'Roll [[call roll_dice {"count": 2}]]', tools: [{ type: 'dice', sides: 4 }] });
    assert.equal(status, 200);
    assert.deepEqual(
      body.output.map((item: { type: string }) => item.type),
      ['dice_call', 'message'],
    );
    assert.equal(body.output[0].status, 'completed');
    assert.match(body.output[0].output, /^rolled [1-4], [1-4] on d4$/);
    // The simulated model's second round was sent the roll as the call's output.
    const second = gateway.upstream.requests.at(-1)!.body as { input: Array<{ type: string; output?: string }> };
    assert.equal(second.input.find((item) => item.type === 'function_call_output')?.output, body.output[0].output);
  });

  it('streams the call between its item added and done', async () => {
    const events = await gateway.stream({ input: 'Roll [[call roll_dice {"count": 1}]]', tools: [{ type: 'dice', sides: 6 }] });
    const ofCall = events.filter((e) => e.type.includes('dice_call') || (e.type.startsWith('response.output_item.') && (e.item as { type: string }).type === 'dice_call'));
    assert.deepEqual(
      ofCall.map((e) => e.type),
      ['response.output_item.added', 'response.dice_call.in_progress', 'response.dice_call.completed', 'response.output_item.done'],
    );
    assert.equal(events.at(-1)!.type, 'response.completed');
  });

  it('waits for the client to approve a roll, then rolls', async () => {
    const tools = [{ type: 'dice', sides: 6, require_approval: 'always' }];
    const first = await gateway.create({ input: 'Roll [[call roll_dice {"count": 1}]]', tools });
    const request = first.body.output.find((item: { type: string }) => item.type === 'dice_approval_request');
    assert.match(request.id, /^dicer_/);
    assert.equal(
      first.body.output.some((item: { type: string }) => item.type === 'dice_call'),
      false,
    );

    const answer = { type: 'dice_approval_response', approval_request_id: request.id, approve: true };
    const second = await gateway.create({ previous_response_id: first.body.id, input: [answer], tools });
    const call = second.body.output.find((item: { type: string }) => item.type === 'dice_call');
    assert.equal(call.status, 'completed');
    assert.equal(call.approval_request_id, request.id);
    assert.match(call.output, /^rolled [1-6] on d6$/);
  });

  it('refuses a declaration it cannot roll with a 400 naming the field', async () => {
    const { status, body } = await gateway.create({ input: 'Roll', tools: [{ type: 'dice', sides: 1 }] });
    assert.equal(status, 400);
    assert.equal(body.error.param, 'tools[0].sides');
  });
});
