import { Injectable, Module } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { optionalBoolean, optionalInteger, optionalString, requireFunctionName } from '#tool-sdk/helpers/declaration-validation.js';
import { GatewayExecutorProvider, ToolHandlerProvider } from '#tool-sdk/decorators.js';
import type {
  ExecutionContext,
  GatewayCall,
  GatewayCallResult,
  GatewayEventPlan,
  GatewayExecutor,
  HistoryContext,
  NormalizedTool,
  ToolHandler,
  ToolOutput,
} from '#tool-sdk/contract/index.js';
import type { JsonObject, ModelItem, PublicItem } from '#tool-sdk/items.js';
import { modelVisibleName } from '#tool-sdk/helpers/model-names.js';
import { simpleApprovalToModelItems, simpleApprovals } from '#tool-sdk/helpers/call-items.js';
import { simpleCallOutput, simpleCallPlan } from './simple-call-items.js';

/**
 * `probe`: a gateway-owned tool type that exists only in unit tests. Its
 * executor does whatever the test sets as `behaviour` and records every call
 * with the context it ran under, so tests observe execution instead of
 * assuming it.
 */
export interface ProbeParams {
  name: string;
  parallel: boolean;
  serverLabel?: string;
  timeoutMs?: number;
  requireApproval: boolean;
}

export type ProbeBehaviour = (call: GatewayCall, params: ProbeParams, ctx: ExecutionContext) => Promise<ToolOutput> | Observable<ToolOutput>;

export const PROBE_TYPE = 'probe';

@Injectable()
@ToolHandlerProvider({ type: PROBE_TYPE })
export class ProbeToolHandler implements ToolHandler<ProbeParams> {
  readonly type = PROBE_TYPE;
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['probe_call', 'probe_approval_request'];
  readonly itemIdPrefix = 'prb';
  readonly approvals = simpleApprovals<ProbeParams>(PROBE_TYPE, { requires: (_call, p) => p.requireApproval, idPrefix: 'prbr' });

  validate(decl: JsonObject, path: string): ProbeParams {
    return {
      name: requireFunctionName(decl, path),
      parallel: optionalBoolean(decl, 'parallel', path) ?? false,
      serverLabel: optionalString(decl, 'server_label', path),
      timeoutMs: optionalInteger(decl, 'timeout_ms', path, 1, 600_000),
      requireApproval: optionalBoolean(decl, 'require_approval', path) ?? false,
    };
  }

  /** Like MCP: a tool behind a server label is offered as `<label>__<name>`. */
  normalize(p: ProbeParams, _discovered: unknown, ctx: { takenNames: ReadonlySet<string> }): NormalizedTool[] {
    const modelName = p.serverLabel ? modelVisibleName([p.serverLabel, p.name], ctx.takenNames) : p.name;
    return [
      {
        fn: { type: 'function', name: modelName, description: 'Probe.', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
        toolName: p.name,
        scope: p.serverLabel,
        executionParams: p,
      },
    ];
  }

  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    const label = typeof it.server_label === 'string' ? it.server_label : typeof it.scope === 'string' ? it.scope : undefined;
    const approval = simpleApprovalToModelItems(item, ctx.modelNameFor(String(it.name), label));
    if (approval) return approval;
    return [
      { type: 'function_call', call_id: String(it.id), name: ctx.modelNameFor(String(it.name), label) ?? String(it.name), arguments: String(it.arguments) },
      { type: 'function_call_output', call_id: String(it.id), output: String(it.output ?? '') },
    ];
  }
}

@Injectable()
@GatewayExecutorProvider({ type: PROBE_TYPE })
export class ProbeExecutor implements GatewayExecutor<ProbeParams> {
  readonly type = PROBE_TYPE;
  readonly calls: Array<{ call: GatewayCall; ctx: ExecutionContext }> = [];
  behaviour: ProbeBehaviour = async (call) => ({ text: `probed ${call.toolName} with ${call.arguments}` });
  /** Set by a test to annotate the answer's text from this response's completed probe calls, as search tools cite. */
  annotate?: (text: string, results: readonly GatewayCallResult[]) => Array<Record<string, unknown>>;

  execute(call: GatewayCall, params: ProbeParams, ctx: ExecutionContext): Promise<ToolOutput> | Observable<ToolOutput> {
    this.calls.push({ call, ctx });
    return this.behaviour(call, params, ctx);
  }

  annotateText(text: string, results: readonly GatewayCallResult[]): Array<Record<string, unknown>> {
    return this.annotate?.(text, results) ?? [];
  }

  supportsParallelExecution(p: ProbeParams): boolean {
    return p.parallel;
  }

  timeoutMs(p: ProbeParams): number | undefined {
    return p.timeoutMs;
  }

  planEvents(call: GatewayCall): GatewayEventPlan {
    return simpleCallPlan('probe_call', call, { extra: { server_label: call.scope } });
  }

  publicOutput(result: GatewayCallResult): PublicItem {
    return simpleCallOutput('probe_call', result, { server_label: result.call.scope, error: result.error?.code ?? null });
  }
}

@Module({ providers: [ProbeToolHandler, ProbeExecutor], exports: [ProbeExecutor] })
export class ProbeToolModule {}
