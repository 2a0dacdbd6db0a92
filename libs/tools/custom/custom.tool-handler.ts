import { Injectable } from '@nestjs/common';
import {
  clientCallModelName,
  type ClientCallShape,
  type FunctionToolDef,
  type HistoryContext,
  InvalidRequestError,
  type JsonObject,
  type ModelItem,
  namedClientToolChoice,
  type NormalizedTool,
  outputContent,
  type PublicItem,
  type ToolHandler,
  ToolHandlerProvider,
  validation,
} from '#tool-sdk/index.js';
import { CUSTOM } from './custom.tool-type.js';

export type CustomToolFormat = { type: 'text' } | { type: 'grammar'; syntax: 'lark' | 'regex'; definition: string };

export interface CustomToolParams {
  name: string;
  description: string | null;
  format: CustomToolFormat;
}

export function validateCustomTool(decl: JsonObject, path: string): CustomToolParams {
  const name = validation.requireFunctionName(decl, path);
  const description = validation.optionalString(decl, 'description', path) ?? null;
  const format = validation.optionalObject(decl, 'format', path);
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
/** Custom calls come back as `custom_tool_call`, the model's `{"input": ...}` relayed as `input` (`custom_tool_call_input.delta`). */
export function customCallShape(name: string, namespace?: string): ClientCallShape {
  return {
    kind: 'custom_tool_call',
    name,
    relay: { kind: 'string-field', field: 'input' },
    idPrefix: 'ctc',
    ...(namespace ? { scope: namespace, trailingFields: { namespace } } : {}),
  };
}

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
@ToolHandlerProvider({ type: CUSTOM })
export class CustomToolHandler implements ToolHandler<CustomToolParams> {
  readonly type = CUSTOM;
  readonly gatewayOwned = false;
  /** A declaration's functions follow from its content alone: prepared lists may be reused. */
  readonly declarationsCacheable = true;
  /** Plain and namespaced custom calls both come back as `custom_tool_call`; the client answers with its output item. */
  readonly historyItemTypes = ['custom_tool_call', 'custom_tool_call_output'];
  readonly callOutputItemTypes = ['custom_tool_call_output'];
  readonly toolChoice = namedClientToolChoice(CUSTOM, 'custom_tool_call', 'namespace');

  validate(decl: JsonObject, path: string): CustomToolParams {
    return validateCustomTool(decl, path);
  }

  normalize(p: CustomToolParams): NormalizedTool[] {
    return [{ fn: customAsFunction(p, p.name), toolName: p.name, clientShape: customCallShape(p.name) }];
  }

  /** The model called a function: the freeform input travels as its one `input` argument. */
  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    if (item.type === 'custom_tool_call_output') return [{ type: 'function_call_output', call_id: String(it.call_id), output: outputContent(it.output) }];
    const namespace = typeof it.namespace === 'string' && it.namespace ? it.namespace : undefined;
    return [
      {
        type: 'function_call',
        call_id: String(it.call_id),
        name: clientCallModelName('custom_tool_call', String(it.name), namespace, ctx),
        arguments: JSON.stringify({ input: it.input ?? '' }),
      },
    ];
  }

  publicDeclaration(p: CustomToolParams): JsonObject {
    return { type: 'custom', name: p.name, description: p.description, format: p.format };
  }
}
