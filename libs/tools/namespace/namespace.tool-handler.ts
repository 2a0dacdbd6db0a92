import { Injectable } from '@nestjs/common';
import {
  InvalidRequestError,
  type JsonObject,
  modelVisibleName,
  type NormalizedTool,
  optionalString,
  requireString,
  type ToolHandler,
  ToolHandlerProvider,
} from '#tool-sdk/index.js';
import { CustomToolParams, customAsFunction, customCallShape, validateCustomTool } from '#tools/custom/custom.tool-handler.js';
import { FunctionToolParams, validateFunctionTool } from '#tools/function/function.tool-handler.js';
import { NAMESPACE } from './namespace.tool-type.js';

type Member = { kind: 'function'; params: FunctionToolParams } | { kind: 'custom'; params: CustomToolParams };

export interface NamespaceToolParams {
  name: string;
  description: string | null;
  members: Member[];
}

/** The model-visible name of a namespace member: the same in every request, so history keeps routing. */
export function namespaceMemberName(namespace: string, member: string): string {
  return modelVisibleName([namespace, member], new Set());
}

/**
 * `namespace` (Codex): a group of client-owned function and custom tools.
 * Members are flattened to `<namespace>__<member>` for the model and restored
 * to `{namespace, name}` on the way out. A flattened name that meets another
 * declared name is a 400 at registry build, not a silent rename.
 */
@Injectable()
@ToolHandlerProvider({ type: NAMESPACE })
export class NamespaceToolHandler implements ToolHandler<NamespaceToolParams> {
  readonly type = NAMESPACE;
  readonly gatewayOwned = false;
  /** A declaration's functions follow from its content alone: prepared lists may be reused. */
  readonly declarationsCacheable = true;

  validate(decl: JsonObject, path: string): NamespaceToolParams {
    const name = requireString(decl, 'name', path);
    const description = optionalString(decl, 'description', path) ?? null;
    const tools = decl.tools;
    if (!Array.isArray(tools) || tools.length === 0) {
      throw new InvalidRequestError(`${path}.tools must be a non-empty array of function or custom tools.`, `${path}.tools`);
    }
    const seen = new Set<string>();
    const members = tools.map((member: unknown, i): Member => {
      const memberPath = `${path}.tools[${i}]`;
      if (!member || typeof member !== 'object' || Array.isArray(member)) {
        throw new InvalidRequestError(`${memberPath} must be an object.`, memberPath);
      }
      const m = member as JsonObject;
      const parsed: Member =
        m.type === 'function'
          ? { kind: 'function', params: validateFunctionTool(m, memberPath) }
          : m.type === 'custom'
            ? { kind: 'custom', params: validateCustomTool(m, memberPath) }
            : (() => {
                throw new InvalidRequestError(`${memberPath}.type must be "function" or "custom".`, `${memberPath}.type`);
              })();
      if (seen.has(parsed.params.name)) {
        throw new InvalidRequestError(`${memberPath}.name "${parsed.params.name}" appears twice in namespace "${name}".`, `${memberPath}.name`);
      }
      seen.add(parsed.params.name);
      return parsed;
    });
    return { name, description, members };
  }

  normalize(p: NamespaceToolParams): NormalizedTool[] {
    return p.members.map((member) => {
      const modelName = namespaceMemberName(p.name, member.params.name);
      const prefix = p.description ? `[${p.name}: ${p.description}] ` : `[${p.name}] `;
      if (member.kind === 'custom') {
        const fn = customAsFunction(member.params, modelName);
        return {
          fn: { ...fn, description: prefix + (fn.description ?? '') },
          toolName: member.params.name,
          clientShape: customCallShape(member.params.name, p.name),
        };
      }
      const f = member.params;
      return {
        fn: { type: 'function', name: modelName, description: prefix + (f.description ?? ''), parameters: f.parameters, strict: f.strict },
        toolName: f.name,
        clientShape: { kind: 'function_call', name: f.name, scope: p.name, trailingFields: { namespace: p.name } },
      };
    });
  }
}
