import { Injectable, Module } from '@nestjs/common';
import { InvalidRequestError } from '../errors/gateway-error.js';
import { optionalBoolean, requireFunctionName } from '../handlers/declaration-validation.js';
import { GatewayExecutorProvider, ToolHandlerProvider } from '../handlers/tool-handler.decorators.js';
import type {
  ExecutionContext,
  GatewayCall,
  GatewayCallResult,
  GatewayEventPlan,
  GatewayExecutor,
  NormalizedTool,
  ToolHandler,
  ToolOutput,
} from '../handlers/tool-handler.interface.js';
import type { JsonObject, PublicItem } from '../protocol/items.js';
import { simpleCallOutput, simpleCallPlan, simpleCallToModelItems } from './simple-call-items.js';

/**
 * A gateway tool type for tests and benchmarks, `nap`, added without touching
 * core: it proves that a module dropped into `imports` is the whole
 * integration. Its executor sleeps for the requested time and records what
 * ran when (high-resolution, bounded), so tests and the scheduler benchmark
 * measure the scheduler instead of assuming it.
 */
export interface NapParams {
  name: string;
  parallel: boolean;
}

export interface NapRecord {
  name: string;
  tag: string;
  start: number;
  end?: number;
  aborted?: boolean;
}

/** Shared across the module's providers and the test that reads it. */
/** Bounded so that a benchmark soak does not measure the ledger itself growing. */
const LEDGER_LIMIT = 1000;

export class NapLedger {
  readonly records: NapRecord[] = [];
  running = 0;
  peak = 0;
  readonly peakByName = new Map<string, number>();
  private readonly runningByName = new Map<string, number>();

  enter(name: string, tag: string): NapRecord {
    const record: NapRecord = { name, tag, start: performance.now() };
    if (this.records.length >= LEDGER_LIMIT) this.records.shift();
    this.records.push(record);
    this.running++;
    this.peak = Math.max(this.peak, this.running);
    const n = (this.runningByName.get(name) ?? 0) + 1;
    this.runningByName.set(name, n);
    this.peakByName.set(name, Math.max(this.peakByName.get(name) ?? 0, n));
    return record;
  }

  leave(record: NapRecord): void {
    record.end = performance.now();
    this.running--;
    this.runningByName.set(record.name, (this.runningByName.get(record.name) ?? 1) - 1);
  }

  reset(): void {
    this.records.length = 0;
    this.running = 0;
    this.peak = 0;
    this.peakByName.clear();
    this.runningByName.clear();
  }
}

export const napLedger = new NapLedger();

@Injectable()
@ToolHandlerProvider({ type: 'nap' })
export class NapToolHandler implements ToolHandler<NapParams> {
  readonly type = 'nap';
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['nap_call'];

  validate(decl: JsonObject, path: string): NapParams {
    const name = requireFunctionName(decl, path);
    if (name.startsWith('forbidden')) throw new InvalidRequestError(`${path}.name may not start with "forbidden".`, `${path}.name`);
    return { name, parallel: optionalBoolean(decl, 'parallel', path) ?? false };
  }

  normalize(p: NapParams): NormalizedTool[] {
    return [
      {
        fn: {
          type: 'function',
          name: p.name,
          description: 'Sleep for a while and report back.',
          parameters: { type: 'object', properties: { ms: { type: 'integer' }, tag: { type: 'string' } }, required: ['ms'] },
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
@GatewayExecutorProvider({ type: 'nap' })
export class NapExecutor implements GatewayExecutor<NapParams> {
  readonly type = 'nap';

  supportsParallelExecution(p: NapParams): boolean {
    return p.parallel;
  }

  async execute(call: GatewayCall, p: NapParams, ctx: ExecutionContext): Promise<ToolOutput> {
    const args = JSON.parse(call.arguments || '{}') as { ms?: number; tag?: string; fail?: boolean };
    const record = napLedger.enter(p.name, args.tag ?? '');
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, args.ms ?? 0);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          record.aborted = true;
          reject(new Error('aborted'));
        });
      });
    } finally {
      napLedger.leave(record);
    }
    if (args.fail) return { text: `nap ${args.tag ?? ''} failed on purpose`, isError: true };
    return { text: `slept ${args.ms ?? 0}ms ${args.tag ?? ''}`.trim() };
  }

  planEvents(call: GatewayCall): GatewayEventPlan {
    return simpleCallPlan('nap_call', call);
  }

  publicOutput(result: GatewayCallResult): PublicItem {
    return simpleCallOutput('nap_call', result);
  }
}

@Module({ providers: [NapToolHandler, NapExecutor] })
export class NapToolModule {}
