import { type GatewayExecutor, type JsonObject, type NormalizedTool, type ToolHandler, type ToolOutput } from 'switchyard-gateway';
import { ToolTestGateway } from 'switchyard-gateway/testing';
import { DICE, type DiceParams, DiceToolHandler, DiceToolModule } from './dice.tool-module.js';

/*
 * The typed key at work: what follows must not compile, and `npm run typecheck`
 * (tsc over this file) fails the day it does. Each class is also used below,
 * so the checks are about real code.
 */

/** An executor under the dice key that expects other parameters. */
class OtherParamsExecutor implements GatewayExecutor<{ faces: string[] }> {
  // @ts-expect-error DICE carries DiceParams to its executor, not { faces: string[] }.
  readonly type = DICE;
  async execute(_call: unknown, params: { faces: string[] }): Promise<ToolOutput> {
    return { text: params.faces.join(' ') };
  }
}

/** A handler under the dice key whose functions would hand the executor other parameters. */
class OtherParamsHandler implements ToolHandler<DiceParams, unknown, DiceParams> {
  readonly type = DICE;
  validate(): DiceParams {
    return { sides: 6, requireApproval: 'never' };
  }
  // @ts-expect-error normalize must give NormalizedTool<DiceParams>: the executor's parameters.
  normalize(): NormalizedTool<{ faces: string[] }>[] {
    return [{ fn: { type: 'function', name: 'roll', parameters: {} }, toolName: 'roll', executionParams: { faces: ['x'] } }];
  }
}

describe('the example dice tool type', () => {
  it('hands the executor the parameters validate checked, under the key both were declared with', () => {
    const handler = new DiceToolHandler();
    const params = handler.validate({ type: 'dice', sides: 8 } as JsonObject, 'tools[0]');
    expect(handler.normalize(params)[0].executionParams).toEqual({ sides: 8, requireApproval: 'never' });
    // The classes that must not compile still run: the key is the plain tag at run time.
    expect(new OtherParamsExecutor().type).toBe('dice');
    expect(new OtherParamsHandler().normalize()[0].executionParams).toEqual({ faces: ['x'] });
  });

  it('runs a request through the testing kit, with the simulated upstream as the model', async () => {
    const gateway = await ToolTestGateway.start({ toolModules: [DiceToolModule] });
    try {
      const events = await gateway.stream({ input: 'Roll [[call roll_dice {"count": 3}]]', tools: [{ type: 'dice', sides: 6 }] });
      const done = events.find((e) => e.type === 'response.output_item.done' && (e.item as { type: string }).type === 'dice_call');
      expect(done?.item).toMatchObject({ type: 'dice_call', status: 'completed', name: 'roll_dice', output: expect.stringMatching(/^rolled \d, \d, \d on d6$/) });
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_e, i) => i));
      const refused = await gateway.create({ input: 'Roll', tools: [{ type: 'dice', require_approval: 'sometimes' }] });
      expect(refused).toMatchObject({ status: 400, body: { error: { param: 'tools[0].require_approval' } } });
    } finally {
      await gateway.close();
    }
  });
});
