import { Injectable } from '@nestjs/common';
import { InvalidRequestError } from '../../core/errors/gateway-error.js';
import { ToolHandlerProvider } from '../../core/handlers/tool-handler.decorators.js';
import type { GatewayCall, HistoryContext, NormalizedTool, ToolHandler } from '../../core/handlers/tool-handler.interface.js';
import type { JsonObject, ModelItem, PublicItem } from '../../core/protocol/items.js';
import { ToolType } from '../../core/tool-types/tool-type.enum.js';

export interface CodeInterpreterParams {
  container: string | JsonObject;
}

function codeOf(args: string): string {
  try {
    const parsed = JSON.parse(args) as { code?: unknown };
    if (typeof parsed.code === 'string') return parsed.code;
  } catch {
    // the model wrote code without JSON around it
  }
  return args;
}

/**
 * `code_interpreter`: gateway-owned, with no executor in this gateway yet;
 * validated and routed, never silently dropped.
 */
@Injectable()
@ToolHandlerProvider()
export class CodeInterpreterToolHandler implements ToolHandler<CodeInterpreterParams> {
  readonly type = ToolType.CodeInterpreter;
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['code_interpreter_call'];

  validate(decl: JsonObject, path: string): CodeInterpreterParams {
    const container = decl.container;
    if (typeof container === 'string' && container.length > 0) return { container };
    if (container && typeof container === 'object' && !Array.isArray(container) && (container as JsonObject).type === 'auto') {
      return { container: container as JsonObject };
    }
    throw new InvalidRequestError(`${path}.container is required: a container id or {"type": "auto"}.`, `${path}.container`);
  }

  normalize(p: CodeInterpreterParams): NormalizedTool[] {
    return [
      {
        fn: {
          type: 'function',
          name: 'code_interpreter',
          description: 'Run Python code.',
          parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
        },
        toolName: 'code_interpreter',
        executionParams: p,
        hidden: true,
      },
    ];
  }

  unboundCallItem(call: GatewayCall, error: { code: string; message: string }): PublicItem {
    return { type: 'code_interpreter_call', id: call.itemId, status: 'failed', code: codeOf(call.arguments), container_id: '', outputs: null, error: error.message };
  }

  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    const callId = String(it.id);
    return [
      { type: 'function_call', call_id: callId, name: ctx.modelNameFor('code_interpreter') ?? 'code_interpreter', arguments: JSON.stringify({ code: it.code ?? '' }) },
      { type: 'function_call_output', call_id: callId, output: JSON.stringify(it.outputs ?? { error: 'no outputs were recorded' }) },
    ];
  }
}
