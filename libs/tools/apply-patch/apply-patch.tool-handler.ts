import { Injectable } from '@nestjs/common';
import {
  type ClientCallContract,
  type ClientCallRestoration,
  firstOfferedToolChoice,
  type HistoryContext,
  type JsonObject,
  type ModelItem,
  type NormalizedTool,
  outputText,
  type PublicItem,
  refusedCall,
  restoredClientFunction,
  type ToolHandler,
  ToolHandlerProvider,
} from '#tool-sdk/index.js';
import { APPLY_PATCH } from './apply-patch.tool-type.js';
import { v4aSyntaxError } from './v4a-diff.js';

export const APPLY_PATCH_FUNCTION = 'apply_patch';

const PARAMETERS: JsonObject = {
  type: 'object',
  properties: {
    operation: {
      type: 'object',
      properties: {
        type: { type: 'string', enum: ['create_file', 'update_file', 'delete_file'] },
        path: { type: 'string', description: 'Path of the file, relative to the workspace.' },
        diff: {
          type: 'string',
          description:
            'V4A diff: for create_file every line is "+content"; for update_file hunks of " context", "-removed", "+added" lines, each opened by "@@" or "@@ <line>". Not for delete_file.',
        },
      },
      required: ['type', 'path'],
      additionalProperties: false,
    },
  },
  required: ['operation'],
  additionalProperties: false,
};

const DESCRIPTION = 'Create, update or delete one file in the user\u2019s workspace with a V4A diff.';

const KINDS = new Set(['create_file', 'update_file', 'delete_file']);

/** The model's arguments as an `apply_patch_call` operation, or why they are not one (the model reads it and writes the patch again). */
export function patchOperation(args: string): { operation: JsonObject } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return { error: 'The arguments are not JSON: write {"operation": {"type": ..., "path": ..., "diff": ...}}.' };
  }
  const op = parsed && typeof parsed === 'object' ? (parsed as JsonObject).operation : undefined;
  if (!op || typeof op !== 'object' || Array.isArray(op)) return { error: 'The arguments must hold an "operation" object.' };
  const { type, path, diff } = op as JsonObject;
  if (typeof type !== 'string' || !KINDS.has(type)) return { error: 'operation.type must be "create_file", "update_file" or "delete_file".' };
  if (typeof path !== 'string' || path.trim() === '') return { error: 'operation.path must name the file.' };
  if (type === 'delete_file') return { operation: { type, path } };
  if (typeof diff !== 'string') return { error: `operation.diff is required for ${type}.` };
  const syntax = v4aSyntaxError(type as 'create_file' | 'update_file', diff);
  if (syntax) return { error: `operation.diff is not a valid V4A diff. ${syntax}` };
  return { operation: { type, path, diff } };
}

/**
 * `apply_patch`: client-owned. The model calls a function taking one
 * `operation`; the call goes back as `apply_patch_call {operation}` once the
 * diff parses, the client applies it and answers with
 * `apply_patch_call_output {status, output}`. A diff that does not parse
 * never reaches the client: the model reads what is wrong with it and writes
 * it again in the next round.
 */
@Injectable()
@ToolHandlerProvider({ type: APPLY_PATCH })
export class ApplyPatchToolHandler implements ToolHandler<Record<string, never>> {
  readonly type = APPLY_PATCH;
  readonly gatewayOwned = false;
  /** A declaration's function follows from its content alone: prepared lists may be reused. */
  readonly declarationsCacheable = true;
  readonly historyItemTypes = ['apply_patch_call', 'apply_patch_call_output'];
  readonly callOutputItemTypes = ['apply_patch_call_output'];
  readonly toolChoice = firstOfferedToolChoice(APPLY_PATCH, ['apply_patch']);
  readonly clientCalls: ClientCallContract = {
    restore(args: string): ClientCallRestoration {
      const parsed = patchOperation(args);
      if ('error' in parsed) return refusedCall('invalid_patch', parsed.error);
      return { fields: { operation: parsed.operation } };
    },
  };

  validate(): Record<string, never> {
    return {};
  }

  normalize(_p: Record<string, never>, _discovered: unknown, ctx: { takenNames: ReadonlySet<string> }): NormalizedTool[] {
    return restoredClientFunction({
      itemType: 'apply_patch_call',
      functionName: APPLY_PATCH_FUNCTION,
      idPrefix: 'apc',
      description: DESCRIPTION,
      parameters: PARAMETERS,
      takenNames: ctx.takenNames,
    });
  }

  publicDeclaration(): JsonObject {
    return { type: 'apply_patch' };
  }

  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    const callId = String(it.call_id);
    if (item.type === 'apply_patch_call') {
      return [
        {
          type: 'function_call',
          call_id: callId,
          name: ctx.modelNameFor(APPLY_PATCH_FUNCTION) ?? APPLY_PATCH_FUNCTION,
          arguments: JSON.stringify({ operation: it.operation ?? {} }),
        },
      ];
    }
    const text = it.output === undefined || it.output === null ? '' : outputText(it.output);
    const status = it.status === 'failed' ? 'failed' : 'completed';
    return [{ type: 'function_call_output', call_id: callId, output: JSON.stringify({ status, output: text }) }];
  }
}
