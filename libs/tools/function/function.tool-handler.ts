import { Injectable } from '@nestjs/common';
import {
  clientCallModelName,
  type HistoryContext,
  type JsonObject,
  type ModelItem,
  namedClientToolChoice,
  type NormalizedTool,
  optionalBoolean,
  optionalString,
  parametersSchema,
  type PublicItem,
  requireFunctionName,
  type ToolHandler,
  ToolHandlerProvider,
} from '#tool-sdk/index.js';
import { FUNCTION } from './function.tool-type.js';

export interface FunctionToolParams {
  name: string;
  description: string | null;
  parameters: JsonObject;
  strict: boolean | null;
}

export function validateFunctionTool(decl: JsonObject, path: string): FunctionToolParams {
  return {
    name: requireFunctionName(decl, path),
    description: optionalString(decl, 'description', path) ?? null,
    parameters: parametersSchema(decl, path),
    strict: optionalBoolean(decl, 'strict', path) ?? null,
  };
}

/** `function`: client-owned, passed to the model unchanged, calls handed back as they are. */
@Injectable()
@ToolHandlerProvider({ type: FUNCTION })
export class FunctionToolHandler implements ToolHandler<FunctionToolParams> {
  readonly type = FUNCTION;
  readonly gatewayOwned = false;
  /** A declaration's functions follow from its content alone: prepared lists may be reused. */
  readonly declarationsCacheable = true;
  /** Plain and namespaced function calls both come back as `function_call` items. */
  readonly historyItemTypes = ['function_call'];
  readonly toolChoice = namedClientToolChoice(FUNCTION, 'function_call', 'namespace');

  validate(decl: JsonObject, path: string): FunctionToolParams {
    return validateFunctionTool(decl, path);
  }

  normalize(p: FunctionToolParams): NormalizedTool[] {
    return [
      {
        fn: { type: 'function', name: p.name, description: p.description, parameters: p.parameters, strict: p.strict },
        toolName: p.name,
        clientShape: { kind: 'function_call', name: p.name },
      },
    ];
  }

  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    const namespace = typeof it.namespace === 'string' && it.namespace ? it.namespace : undefined;
    // A plain call keeps its name: it is the model-visible one.
    const name = namespace ? clientCallModelName('function_call', String(it.name), namespace, ctx) : String(it.name);
    return [{ type: 'function_call', call_id: String(it.call_id), name, arguments: typeof it.arguments === 'string' ? it.arguments : '' }];
  }

  publicDeclaration(p: FunctionToolParams): JsonObject {
    return { type: 'function', name: p.name, description: p.description, parameters: p.parameters, strict: p.strict };
  }
}
