import { Injectable, Module } from '@nestjs/common';
import { optionalBoolean, requireFunctionName } from '../libs/core/handlers/declaration-validation.js';
import { GatewayExecutorProvider, ToolHandlerProvider } from '../libs/core/handlers/tool-handler.decorators.js';
import type {
  ExecutionContext,
  GatewayCall,
  GatewayCallResult,
  GatewayEventPlan,
  GatewayExecutor,
  NormalizedTool,
  ToolHandler,
  ToolOutput,
} from '../libs/core/handlers/tool-handler.interface.js';
import type { JsonObject, PublicItem } from '../libs/core/protocol/items.js';
import { simpleCallOutput, simpleCallPlan, simpleCallToModelItems } from '../libs/core/testing/simple-call-items.js';

/**
 * A benchmark-only gateway tool type, `sleep`: each call waits `ms`
 * milliseconds. The gateway child loads it so the scheduler benchmark can
 * compare wall time with `ceil(N / W) × latency`. Its public item comes from
 * the shared test-tool helpers (`libs/core/testing/simple-call-items.ts`).
 */
interface SleepParams {
  name: string;
  parallel: boolean;
}

export interface SleepRecord {
  start: number;
  end: number;
}

/** Start and end times (ms since the time origin) of recent calls, read by the bench over IPC. */
export const sleepLedger: SleepRecord[] = [];
/** Bounded so that a soak does not measure the ledger itself growing. */
const LEDGER_LIMIT = 1000;

@Injectable()
@ToolHandlerProvider()
export class SleepToolHandler implements ToolHandler<SleepParams> {
  readonly type = 'sleep';
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['sleep_call'];

  validate(decl: JsonObject, path: string): SleepParams {
    return { name: requireFunctionName(decl, path), parallel: optionalBoolean(decl, 'parallel', path) ?? false };
  }

  normalize(p: SleepParams): NormalizedTool[] {
    return [
      {
        fn: {
          type: 'function',
          name: p.name,
          description: 'Wait for a number of milliseconds.',
          parameters: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
        },
        toolName: p.name,
        executionParams: p,
      },
    ];
  }

  toModelItems(item: PublicItem) {
    return simpleCallToModelItems(item);
  }
}

@Injectable()
@GatewayExecutorProvider()
export class SleepExecutor implements GatewayExecutor<SleepParams> {
  readonly type = 'sleep';

  supportsParallelExecution(p: SleepParams): boolean {
    return p.parallel;
  }

  execute(call: GatewayCall, _p: SleepParams, ctx: ExecutionContext): Promise<ToolOutput> {
    const ms = Number((JSON.parse(call.arguments || '{}') as { ms?: unknown }).ms) || 0;
    const record: SleepRecord = { start: performance.now(), end: 0 };
    if (sleepLedger.length >= LEDGER_LIMIT) sleepLedger.splice(0, sleepLedger.length - LEDGER_LIMIT + 1);
    sleepLedger.push(record);
    return new Promise<ToolOutput>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(new Error('aborted'));
      };
      const timer = setTimeout(() => {
        ctx.signal.removeEventListener('abort', onAbort);
        record.end = performance.now();
        resolve({ text: `slept ${ms}ms` });
      }, ms);
      ctx.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  planEvents(call: GatewayCall): GatewayEventPlan {
    return simpleCallPlan('sleep_call', call, { events: false });
  }

  publicOutput(result: GatewayCallResult): PublicItem {
    return simpleCallOutput('sleep_call', result);
  }
}

@Module({ providers: [SleepToolHandler, SleepExecutor] })
export class SleepToolModule {}
