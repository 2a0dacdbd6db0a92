import { Injectable } from '@nestjs/common';
import { InvalidRequestError } from '#core/errors/gateway-error.js';
import { optionalObject, optionalString, requireFunctionName } from '#core/handlers/declaration-validation.js';
import { ToolHandlerProvider } from '#core/handlers/tool-handler.decorators.js';
import type { NormalizedTool, ToolHandler } from '#core/handlers/tool-handler.interface.js';
import type { FunctionToolDef, JsonObject } from '#core/protocol/items.js';
import { ToolType } from '#core/tool-types/tool-type.enum.js';

export type CustomToolFormat = { type: 'text' } | { type: 'grammar'; syntax: 'lark' | 'regex'; definition: string };

export interface CustomToolParams {
  name: string;
  description: string | null;
  format: CustomToolFormat;
}

export function validateCustomTool(decl: JsonObject, path: string): CustomToolParams {
  const name = requireFunctionName(decl, path);
  const description = optionalString(decl, 'description', path) ?? null;
  const format = optionalObject(decl, 'format', path);
  if (!format || format.type === 'text') return { name, description, format: { type: 'text' } };
  if (format.type !== 'grammar') {
    throw new InvalidRequestError(`${path}.format.type must be "text" or "grammar".`, `${path}.format.type`);
  }
  if (format.syntax !== 'lark' && format.syntax !== 'regex') {
    throw new InvalidRequestError(`${path}.format.syntax must be "lark" or "regex".`, `${path}.format.syntax`);
  }
  if (typeof format.definition !== 'string' || format.definition.length === 0) {
    throw new InvalidRequestError(`${path}.format.definition is required for a grammar format.`, `${path}.format.definition`);
  }
  return { name, description, format: { type: 'grammar', syntax: format.syntax, definition: format.definition } };
}

/**
 * A freeform tool as a function with one string parameter. The grammar goes
 * into the description: function-calling upstreams cannot constrain to it,
 * but a model told the grammar usually follows it.
 */
export function customAsFunction(p: CustomToolParams, modelName: string): FunctionToolDef {
  const lines = [p.description ?? `Freeform tool "${p.name}".`, '', 'Pass the whole freeform input as the string argument "input".'];
  if (p.format.type === 'grammar') {
    lines.push(`The input must match this ${p.format.syntax === 'lark' ? 'Lark grammar' : 'regular expression'}:`, p.format.definition);
  }
  return {
    type: 'function',
    name: modelName,
    description: lines.join('\n'),
    parameters: {
      type: 'object',
      properties: { input: { type: 'string', description: 'The freeform input for the tool.' } },
      required: ['input'],
      additionalProperties: false,
    },
    strict: true,
  };
}

/** `custom`: client-owned freeform tool; calls come back as `custom_tool_call`. */
@Injectable()
@ToolHandlerProvider()
export class CustomToolHandler implements ToolHandler<CustomToolParams> {
  readonly type = ToolType.Custom;
  readonly gatewayOwned = false;

  validate(decl: JsonObject, path: string): CustomToolParams {
    return validateCustomTool(decl, path);
  }

  normalize(p: CustomToolParams): NormalizedTool[] {
    return [{ fn: customAsFunction(p, p.name), toolName: p.name, clientShape: { kind: 'custom_tool_call', name: p.name } }];
  }

  publicDeclaration(p: CustomToolParams): JsonObject {
    return { type: 'custom', name: p.name, description: p.description, format: p.format };
  }
}
