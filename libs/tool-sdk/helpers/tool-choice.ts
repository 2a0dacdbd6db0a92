import { InvalidRequestError } from '../errors.js';
import type { JsonObject } from '../items.js';
import type { ClientCallShape, ToolChoiceContext, ToolChoiceContract, ToolChoiceTarget } from '../contract/index.js';

/**
 * `tool_choice: {type: "<choice type>"}` for a gateway-run type with one
 * model-visible tool per declaration: forces the first one offered.
 * `choiceTypes` are the spellings accepted (a type and its dated aliases).
 */
export function firstOfferedToolChoice(toolType: string, choiceTypes: readonly string[]): ToolChoiceContract {
  return {
    types: choiceTypes,
    resolve(choice: JsonObject, ctx: ToolChoiceContext): ToolChoiceTarget {
      const type = String(choice.type);
      const declared = ctx.entries.filter((e) => e.toolType === toolType);
      const entries = declared.filter((e) => e.offered);
      if (entries.length === 0) {
        // Declared but kept from the model (no provider, say): forcing it would force a failure.
        const why = declared.length > 0 ? 'which is declared but cannot run on this gateway, so it is not offered to the model' : 'which is not among the declared tools';
        throw new InvalidRequestError(`tool_choice asks for ${type}, ${why}.`, 'tool_choice.type');
      }
      return { force: entries[0].modelName };
    },
  };
}

/**
 * `tool_choice: {type, name, <scope field>?}` for client-owned tools handed
 * back as `kind`: the name may be model-visible, or a member's own name
 * (found under its group with the scope field, or alone when unambiguous).
 */
export function namedClientToolChoice(choiceType: string, kind: ClientCallShape['kind'], scopeField: string): ToolChoiceContract {
  return {
    types: [choiceType],
    resolve(choice: JsonObject, ctx: ToolChoiceContext): ToolChoiceTarget {
      const name = String(choice.name ?? '');
      const scope = choice[scopeField];
      const entry = typeof scope === 'string' ? scopedClientTool(ctx, name, scope) : (ctx.lookup(name) ?? onlyClientTool(ctx, name, kind));
      if (!entry) throw new InvalidRequestError(`tool_choice names "${name}", which is not among the declared tools.`, 'tool_choice.name');
      return { force: entry.modelName };
    },
  };
}

function scopedClientTool(ctx: ToolChoiceContext, name: string, scope: string) {
  return ctx.entries.find((e) => e.ownership.kind === 'client' && e.ownership.shape.name === name && e.scope === scope);
}

function onlyClientTool(ctx: ToolChoiceContext, name: string, kind: ClientCallShape['kind']) {
  const matches = ctx.entries.filter((e) => e.ownership.kind === 'client' && e.ownership.shape.name === name && e.ownership.shape.kind === kind);
  return matches.length === 1 ? matches[0] : undefined;
}
