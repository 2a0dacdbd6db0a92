import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { ToolHandlerExplorer } from '../handlers/tool-handler.explorer.js';
import type { AnyToolHandler, ToolChoiceContext, ToolChoiceTarget } from '#tool-sdk/contract/index.js';
import type { FunctionToolDef, JsonObject, ModelToolChoice } from '#tool-sdk/items.js';
import type { PublicToolChoice } from '../loop/response-request.js';
import type { ToolRegistry } from './tool-registry.js';

export interface ResolvedToolChoice {
  choice: ModelToolChoice;
  /** The functions offered to the model (narrowed by `allowed_tools`). */
  tools: readonly FunctionToolDef[];
  /** True when the choice forces a call: it applies to the first round only. */
  forcing: boolean;
}

/**
 * Maps the public `tool_choice` onto the model-visible names. The string
 * forms and `allowed_tools` are the loop's own; every `{type: ...}` object
 * is answered by the tool module that claims that type (`ToolHandler.toolChoice`),
 * so a module outside the repository can be forced like a built-in one.
 */
export function resolveToolChoice(choice: PublicToolChoice, registry: ToolRegistry, explorer: ToolHandlerExplorer): ResolvedToolChoice {
  const offered = registry.functions;
  if (typeof choice === 'string') {
    if (choice === 'required' && offered.length === 0) {
      throw new InvalidRequestError('tool_choice "required" needs at least one tool the model can call.', 'tool_choice');
    }
    return { choice, tools: offered, forcing: choice === 'required' };
  }
  const type = String(choice.type);
  if (type === 'allowed_tools') return resolveAllowedTools(choice as JsonObject, registry, explorer);
  const handler = choiceHandler(type, registry, explorer);
  if (!handler?.toolChoice) throw new InvalidRequestError(`tool_choice.type "${type}" is not supported.`, 'tool_choice.type');
  const target = handler.toolChoice.resolve(choice as JsonObject, choiceContext(registry));
  return applyTarget(target, offered);
}

/** The module answering `{type}`: whichever the explorer indexed, else one a declared entry brought (hand-built registries). */
function choiceHandler(type: string, registry: ToolRegistry, explorer: ToolHandlerExplorer): AnyToolHandler | undefined {
  const indexed = explorer.handlerForChoiceType(type);
  if (indexed) return indexed;
  for (const entry of registry.all()) if (entry.handler.toolChoice?.types.includes(type)) return entry.handler;
  return undefined;
}

function choiceContext(registry: ToolRegistry): ToolChoiceContext {
  return {
    entries: [...registry.all()],
    lookup: (modelName) => registry.lookup(modelName),
    clientCall: (kind, name, scope) => registry.findClientCall(kind, name, scope),
  };
}

function applyTarget(target: ToolChoiceTarget, offered: readonly FunctionToolDef[]): ResolvedToolChoice {
  if ('force' in target) return { choice: { type: 'function', name: target.force }, tools: offered, forcing: true };
  const names = new Set(target.anyOf);
  return { choice: 'required', tools: offered.filter((f) => names.has(f.name)), forcing: true };
}

function resolveAllowedTools(choice: JsonObject, registry: ToolRegistry, explorer: ToolHandlerExplorer): ResolvedToolChoice {
  const offered = registry.functions;
  const mode = String(choice.mode ?? 'auto');
  const listed = choice.tools;
  if (!Array.isArray(listed)) throw new InvalidRequestError('tool_choice.tools must be an array.', 'tool_choice.tools');
  const names = new Set<string>();
  listed.forEach((t: unknown, i) => {
    if (!t || typeof t !== 'object' || Array.isArray(t)) throw new InvalidRequestError('allowed tool must be an object', `tool_choice.tools[${i}]`);
    let sub: ResolvedToolChoice;
    try {
      sub = resolveToolChoice(t as PublicToolChoice, registry, explorer);
    } catch (err) {
      // An entry's error names the field inside that entry, not a top-level one.
      if (err instanceof InvalidRequestError && err.param?.startsWith('tool_choice')) {
        throw new InvalidRequestError(err.message, err.param.replace(/^tool_choice/, `tool_choice.tools[${i}]`), err.code);
      }
      throw err;
    }
    if (typeof sub.choice === 'object') names.add(sub.choice.name);
    else sub.tools.forEach((f) => names.add(f.name));
  });
  if (mode !== 'auto' && mode !== 'required') throw new InvalidRequestError('tool_choice.mode must be "auto" or "required".', 'tool_choice.mode');
  return { choice: mode, tools: offered.filter((f) => names.has(f.name)), forcing: mode === 'required' };
}
