import { Injectable, Module } from '@nestjs/common';
import {
  type ExecutionContext,
  type GatewayCall,
  type GatewayCallResult,
  type GatewayEventPlan,
  type GatewayExecutor,
  GatewayExecutorProvider,
  type HistoryContext,
  InvalidRequestError,
  type JsonObject,
  type ModelItem,
  type NormalizedTool,
  type PublicItem,
  type ToolHandler,
  ToolHandlerProvider,
  type ToolOutput,
  simpleCallOutput,
  simpleCallPlan,
  simpleCallToModelItems,
} from 'switchyard-gateway';

/** `{"type": "dice", "sides": 6}`: a gateway-owned tool the model can call to roll dice. */
export interface DiceParams {
  sides: number;
}

const TOOL_NAME = 'roll_dice';

@Injectable()
@ToolHandlerProvider({ type: 'dice' })
export class DiceToolHandler implements ToolHandler<DiceParams> {
  readonly type = 'dice';
  readonly gatewayOwned = true;
  /** `dice_call` items come back as input on later turns (history replay). */
  readonly historyItemTypes = ['dice_call'];

  validate(declaration: JsonObject, path: string): DiceParams {
    const sides = declaration.sides ?? 6;
    if (typeof sides !== 'number' || !Number.isInteger(sides) || sides < 2 || sides > 1000) {
      throw new InvalidRequestError(`${path}.sides must be an integer between 2 and 1000.`, `${path}.sides`);
    }
    return { sides };
  }

  normalize(params: DiceParams): NormalizedTool[] {
    return [
      {
        fn: {
          type: 'function',
          name: TOOL_NAME,
          description: `Roll dice with ${params.sides} sides and report the numbers.`,
          parameters: { type: 'object', properties: { count: { type: 'integer', minimum: 1, maximum: 20 } }, required: ['count'] },
        },
        toolName: TOOL_NAME,
        executionParams: params,
      },
    ];
  }

  /** A past `dice_call` becomes the call and its output the model saw then, under today's name for the tool. */
  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    return simpleCallToModelItems(item, ctx.modelNameFor(TOOL_NAME));
  }
}

@Injectable()
@GatewayExecutorProvider({ type: 'dice' })
export class DiceExecutor implements GatewayExecutor<DiceParams> {
  readonly type = 'dice';

  async execute(call: GatewayCall, params: DiceParams, ctx: ExecutionContext): Promise<ToolOutput> {
    if (ctx.signal.aborted) return { text: 'cancelled', isError: true };
    const args = JSON.parse(call.arguments || '{}') as { count?: unknown };
    const count = typeof args.count === 'number' && Number.isInteger(args.count) ? Math.min(Math.max(args.count, 1), 20) : 1;
    const rolls = Array.from({ length: count }, () => 1 + Math.floor(Math.random() * params.sides));
    return { text: `rolled ${rolls.join(', ')} on d${params.sides}` };
  }

  planEvents(call: GatewayCall): GatewayEventPlan {
    return simpleCallPlan('dice_call', call);
  }

  publicOutput(result: GatewayCallResult): PublicItem {
    return simpleCallOutput('dice_call', result);
  }
}

/** Dropped into `GatewayModule.forRoot({ imports })`: the whole integration of a new tool type. */
@Module({ providers: [DiceToolHandler, DiceExecutor] })
export class DiceToolModule {}
