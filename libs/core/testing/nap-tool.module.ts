import { Injectable, Module } from '@nestjs/common';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import { simpleApprovalToModelItems, simpleApprovals } from '#tool-sdk/helpers/call-items.js';
import { optionalBoolean, requireFunctionName } from '#tool-sdk/helpers/declaration-validation.js';
import { GatewayExecutorProvider, ToolHandlerProvider } from '#tool-sdk/decorators.js';
import type {
  ExecutionContext,
  GatewayCall,
  GatewayCallResult,
  GatewayEventPlan,
  GatewayExecutor,
  HistoryContext,
  NormalizedTool,
  ToolChoiceContext,
  ToolChoiceContract,
  ToolChoiceTarget,
  ToolHandler,
  ToolOutput,
} from '#tool-sdk/contract/index.js';
import type { JsonObject, PublicItem } from '#tool-sdk/items.js';
import { simpleCallOutput, simpleCallPlan, simpleCallToModelItems } from './simple-call-items.js';

/**
 * A gateway tool type for tests and benchmarks, `nap`, added without touching
 * core: it proves that a module dropped into `imports` is the whole
 * integration, approvals (`require_approval`), its own `tool_choice` forms
 * (`{type: "nap", name}` and the alias `{type: "siesta"}`) and history
 * replay included. Its executor sleeps for the requested time and records what
 * ran when (high-resolution, bounded), so tests and the scheduler benchmark
 * measure the scheduler instead of assuming it.
 */
export interface NapParams {
  name: string;
  parallel: boolean;
  /** Calls wait for a `nap_approval_response` before they run. */
  requireApproval: boolean;
}

export const NAP_TYPE = 'nap';

/**
 * `{type: "nap", name}` forces that nap; `{type: "siesta"}`, an alias, forces
 * the first nap declared. Core has never heard of either spelling.
 */
export const napToolChoice: ToolChoiceContract = {
  types: [NAP_TYPE, 'siesta'],
  resolve(choice: JsonObject, ctx: ToolChoiceContext): ToolChoiceTarget {
    const naps = ctx.entries.filter((e) => e.toolType === NAP_TYPE && e.offered);
    const wanted = typeof choice.name === 'string' ? naps.find((e) => e.toolName === choice.name) : naps[0];
    if (!wanted)
      throw new InvalidRequestError(`tool_choice asks for a nap${typeof choice.name === 'string' ? ` named "${choice.name}"` : ''}, and none is declared.`, 'tool_choice');
    return { force: wanted.modelName };
  },
};

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
@ToolHandlerProvider({ type: NAP_TYPE })
export class NapToolHandler implements ToolHandler<NapParams> {
  readonly type = NAP_TYPE;
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['nap_call', 'nap_approval_request'];
  readonly itemIdPrefix = 'nap';
  readonly toolChoice = napToolChoice;
  readonly approvals = simpleApprovals<NapParams>(NAP_TYPE, { requires: (_call, p) => p.requireApproval, idPrefix: 'napr' });

  validate(decl: JsonObject, path: string): NapParams {
    const name = requireFunctionName(decl, path);
    if (name.startsWith('forbidden')) throw new InvalidRequestError(`${path}.name may not start with "forbidden".`, `${path}.name`);
    return {
      name,
      parallel: optionalBoolean(decl, 'parallel', path) ?? false,
      requireApproval: optionalBoolean(decl, 'require_approval', path) ?? false,
    };
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

  /** A replayed nap, or an approval request (the model's call, answered by its response), under today's model-visible name. */
  toModelItems(item: PublicItem, ctx: HistoryContext) {
    const name = String((item as JsonObject).name);
    const modelName = ctx.modelNameFor(name) ?? name;
    return simpleApprovalToModelItems(item, modelName) ?? simpleCallToModelItems(item, modelName);
  }
}

@Injectable()
@GatewayExecutorProvider({ type: NAP_TYPE })
export class NapExecutor implements GatewayExecutor<NapParams> {
  readonly type = NAP_TYPE;

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
