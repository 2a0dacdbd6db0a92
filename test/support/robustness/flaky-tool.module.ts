import { Injectable, Module } from '@nestjs/common';
import { requireFunctionName } from '#tool-sdk/helpers/declaration-validation.js';
import { GatewayExecutorProvider, ToolHandlerProvider } from '#tool-sdk/decorators.js';
import type { ExecutionContext, GatewayCall, GatewayCallResult, GatewayEventPlan, GatewayExecutor, NormalizedTool, ToolHandler, ToolOutput } from '#tool-sdk/contract/index.js';
import type { JsonObject, PublicItem } from '#tool-sdk/items.js';
import { simpleCallOutput, simpleCallPlan } from '#core/testing/simple-call-items.js';

/**
 * A test-only gateway tool type, `flaky`, that fails in the ways real tools
 * do. The model's arguments pick the failure:
 *
 * - `{"mode": "throw"}`: throws synchronously from `execute`
 * - `{"mode": "reject"}`: returns a promise that rejects
 * - `{"mode": "remote", "url": "..."}`: POSTs to a tool server over HTTP
 *   (with the call's abort signal) and returns its answer; the test kills
 *   that server mid-call
 * - `{"mode": "hang"}`: never answers; settles only when its signal aborts
 *
 * Every call is recorded with whether its abort signal fired.
 */
export interface FlakyRecord {
  mode: string;
  start: number;
  end?: number;
  aborted: boolean;
  abortReason?: string;
}

export const flakyLedger: FlakyRecord[] = [];

@Injectable()
@ToolHandlerProvider({ type: 'flaky' })
export class FlakyToolHandler implements ToolHandler<{ name: string }> {
  readonly type = 'flaky';
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['flaky_call'];

  validate(decl: JsonObject, path: string): { name: string } {
    return { name: requireFunctionName(decl, path) };
  }

  normalize(p: { name: string }): NormalizedTool[] {
    return [
      {
        fn: {
          type: 'function',
          name: p.name,
          description: 'A tool that fails on request.',
          parameters: { type: 'object', properties: { mode: { type: 'string' }, url: { type: 'string' } }, required: ['mode'] },
        },
        toolName: p.name,
        executionParams: p,
      },
    ];
  }
}

@Injectable()
@GatewayExecutorProvider({ type: 'flaky' })
export class FlakyExecutor implements GatewayExecutor<{ name: string }> {
  readonly type = 'flaky';

  supportsParallelExecution(): boolean {
    return true;
  }

  execute(call: GatewayCall, _p: { name: string }, ctx: ExecutionContext): Promise<ToolOutput> {
    const args = JSON.parse(call.arguments || '{}') as { mode?: string; url?: string };
    const record: FlakyRecord = { mode: args.mode ?? '', start: Date.now(), aborted: false };
    flakyLedger.push(record);
    ctx.signal.addEventListener(
      'abort',
      () => {
        record.aborted = true;
        record.abortReason = ctx.signal.reason instanceof Error ? ctx.signal.reason.message : String(ctx.signal.reason);
      },
      { once: true },
    );
    if (args.mode === 'throw') throw new Error('flaky tool threw on purpose');
    if (args.mode === 'reject') return Promise.reject(new Error('flaky tool rejected on purpose'));
    if (args.mode === 'hang') {
      return new Promise<ToolOutput>((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(new Error('hang ended by abort')), { once: true });
      }).finally(() => (record.end = Date.now()));
    }
    if (args.mode === 'remote') {
      return fetch(args.url!, { method: 'POST', body: call.arguments, signal: ctx.signal })
        .then(async (res) => ({ text: await res.text() }))
        .finally(() => (record.end = Date.now()));
    }
    return Promise.resolve({ text: `unknown mode ${String(args.mode)}`, isError: true });
  }

  planEvents(call: GatewayCall): GatewayEventPlan {
    return simpleCallPlan('flaky_call', call, { events: false });
  }

  publicOutput(result: GatewayCallResult): PublicItem {
    return simpleCallOutput('flaky_call', result);
  }
}

@Module({ providers: [FlakyToolHandler, FlakyExecutor] })
export class FlakyToolModule {}
