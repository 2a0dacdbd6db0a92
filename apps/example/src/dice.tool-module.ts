import { Injectable, Module } from '@nestjs/common';
import {
  type ExecutionContext,
  type GatewayCall,
  type GatewayExecutor,
  GatewayExecutorProvider,
  InvalidRequestError,
  type JsonObject,
  type NormalizedTool,
  type ToolHandler,
  ToolHandlerProvider,
  type ToolOutput,
  simpleApprovals,
  toolType,
} from 'switchyard-gateway';

/**
 * `{"type": "dice", "sides": 6, "require_approval": "never"}`: a gateway-owned
 * tool the model calls to roll dice. This file is the SDK guide's code
 * (libs/tool-sdk/README.md), step for step.
 */
export interface DiceParams {
  sides: number;
  /** `always`: each roll waits for the client's `dice_approval_response`. */
  requireApproval: 'always' | 'never';
}

/** The type's key: its tag, carrying the parameters its functions hand to its executor. */
export const DICE = toolType<DiceParams>('dice');

const TOOL_NAME = 'roll_dice';

@Injectable()
@ToolHandlerProvider({ type: DICE })
export class DiceToolHandler implements ToolHandler<DiceParams, unknown, DiceParams> {
  readonly type = DICE;
  /** The built-in approval flow: `dice_approval_request` items, answered by `dice_approval_response`. */
  readonly approvals = simpleApprovals<DiceParams>(DICE, { requires: (_call, params) => params.requireApproval === 'always', idPrefix: 'dicer' });

  validate(declaration: JsonObject, path: string): DiceParams {
    const sides = declaration.sides ?? 6;
    if (typeof sides !== 'number' || !Number.isInteger(sides) || sides < 2 || sides > 1000) {
      throw new InvalidRequestError(`${path}.sides must be an integer between 2 and 1000.`, `${path}.sides`);
    }
    const requireApproval = declaration.require_approval ?? 'never';
    if (requireApproval !== 'always' && requireApproval !== 'never') {
      throw new InvalidRequestError(`${path}.require_approval must be "always" or "never".`, `${path}.require_approval`);
    }
    return { sides, requireApproval };
  }

  normalize(params: DiceParams): NormalizedTool<DiceParams>[] {
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
}

@Injectable()
@GatewayExecutorProvider({ type: DICE })
export class DiceExecutor implements GatewayExecutor<DiceParams> {
  readonly type = DICE;

  async execute(call: GatewayCall, params: DiceParams, ctx: ExecutionContext): Promise<ToolOutput> {
    if (ctx.signal.aborted) return { text: 'cancelled', isError: true };
    const args = JSON.parse(call.arguments || '{}') as { count?: unknown };
    const count = typeof args.count === 'number' && Number.isInteger(args.count) ? Math.min(Math.max(args.count, 1), 20) : 1;
    const rolls = Array.from({ length: count }, () => 1 + Math.floor(Math.random() * params.sides));
    return { text: `rolled ${rolls.join(', ')} on d${params.sides}` };
  }
}

/** Dropped into `GatewayModule.forRoot({ imports })`, or a plugin's `toolModules`: the whole integration of a new tool type. */
@Module({ providers: [DiceToolHandler, DiceExecutor] })
export class DiceToolModule {}
