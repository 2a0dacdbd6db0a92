import { Injectable } from '@nestjs/common';
import { optionalBoolean, optionalString, parametersSchema, requireFunctionName } from '#core/handlers/declaration-validation.js';
import { ToolHandlerProvider } from '#core/handlers/tool-handler.decorators.js';
import type { NormalizedTool, ToolHandler } from '#core/handlers/tool-handler.interface.js';
import type { JsonObject } from '#core/protocol/items.js';
import { ToolType } from '#core/tool-types/tool-type.enum.js';

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
@ToolHandlerProvider()
export class FunctionToolHandler implements ToolHandler<FunctionToolParams> {
  readonly type = ToolType.Function;
  readonly gatewayOwned = false;

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

  publicDeclaration(p: FunctionToolParams): JsonObject {
    return { type: 'function', name: p.name, description: p.description, parameters: p.parameters, strict: p.strict };
  }
}
