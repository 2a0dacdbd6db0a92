import { InvalidRequestError } from '../errors/gateway-error.js';
import type { FunctionToolDef, ModelToolChoice } from '../protocol/items.js';
import type { PublicToolChoice } from '../loop/response-request.js';
import type { ToolEntry, ToolRegistry } from './tool-registry.js';

export interface ResolvedToolChoice {
  choice: ModelToolChoice;
  /** The functions offered to the model (narrowed by `allowed_tools`). */
  tools: FunctionToolDef[];
  /** True when the choice forces a call: it applies to the first round only. */
  forcing: boolean;
}

/** Hosted tool types whose `tool_choice` form is `{type: "<type>"}`. */
const HOSTED_CHOICE_TYPES: Record<string, string> = {
  web_search_preview: 'web_search',
  web_search: 'web_search',
  web_search_preview_2025_03_11: 'web_search',
  web_search_2025_08_26: 'web_search',
  file_search: 'file_search',
  code_interpreter: 'code_interpreter',
};

/**
 * Maps the public `tool_choice` onto the model-visible names. Plain, custom
 * and namespaced names all resolve through the registry (open question Q3),
 * so a forced namespace member or MCP tool works like a plain function.
 */
export function resolveToolChoice(choice: PublicToolChoice, registry: ToolRegistry): ResolvedToolChoice {
  const offered = registry.functions;
  if (typeof choice === 'string') {
    if (choice === 'required' && offered.length === 0) {
      throw new InvalidRequestError('tool_choice "required" needs at least one tool the model can call.', 'tool_choice');
    }
    return { choice, tools: offered, forcing: choice === 'required' };
  }
  const type = String(choice.type);
  if (type === 'function' || type === 'custom') {
    const name = String((choice as { name?: unknown }).name ?? '');
    const namespace = (choice as { namespace?: unknown }).namespace;
    const entry = findNamed(registry, name, type, typeof namespace === 'string' ? namespace : undefined);
    if (!entry) throw new InvalidRequestError(`tool_choice names "${name}", which is not among the declared tools.`, 'tool_choice.name');
    return { choice: { type: 'function', name: entry.modelName }, tools: offered, forcing: true };
  }
  if (type === 'mcp') {
    const label = String((choice as { server_label?: unknown }).server_label ?? '');
    const name = (choice as { name?: unknown }).name;
    const onServer = [...registry.all()].filter((e) => e.toolType === 'mcp' && e.serverLabel === label && e.offered);
    if (onServer.length === 0) throw new InvalidRequestError(`tool_choice names MCP server "${label}", which offers no tools in this request.`, 'tool_choice.server_label');
    if (typeof name === 'string') {
      const entry = onServer.find((e) => e.toolName === name);
      if (!entry) throw new InvalidRequestError(`MCP server "${label}" has no tool "${name}".`, 'tool_choice.name');
      return { choice: { type: 'function', name: entry.modelName }, tools: offered, forcing: true };
    }
    const names = new Set(onServer.map((e) => e.modelName));
    return { choice: 'required', tools: offered.filter((f) => names.has(f.name)), forcing: true };
  }
  if (type === 'allowed_tools') {
    const mode = String((choice as { mode?: unknown }).mode ?? 'auto');
    const listed = (choice as { tools?: unknown }).tools;
    if (!Array.isArray(listed)) throw new InvalidRequestError('tool_choice.tools must be an array.', 'tool_choice.tools');
    const names = new Set<string>();
    listed.forEach((t: unknown, i) => {
      if (!t || typeof t !== 'object' || Array.isArray(t)) throw new InvalidRequestError('allowed tool must be an object', `tool_choice.tools[${i}]`);
      let sub: ResolvedToolChoice;
      try {
        sub = resolveToolChoice(t as PublicToolChoice, registry);
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
  const hosted = HOSTED_CHOICE_TYPES[type];
  if (hosted) {
    const declared = [...registry.all()].filter((e) => e.toolType === hosted);
    const entries = declared.filter((e) => e.offered);
    if (entries.length === 0) {
      // Declared but kept from the model (web search without a provider, say): forcing it would force a failure.
      const why = declared.length > 0 ? 'which is declared but cannot run on this gateway, so it is not offered to the model' : 'which is not among the declared tools';
      throw new InvalidRequestError(`tool_choice asks for ${type}, ${why}.`, 'tool_choice.type');
    }
    return { choice: { type: 'function', name: entries[0].modelName }, tools: offered, forcing: true };
  }
  throw new InvalidRequestError(`tool_choice.type "${type}" is not supported.`, 'tool_choice.type');
}

function findNamed(registry: ToolRegistry, name: string, kind: 'function' | 'custom', namespace?: string): ToolEntry | undefined {
  if (namespace) return registry.findByIdentity('namespace', name, namespace);
  const direct = registry.lookup(name);
  if (direct) return direct;
  const wanted = kind === 'custom' ? 'custom_tool_call' : 'function_call';
  const matches = [...registry.all()].filter((e) => e.ownership.kind === 'client' && e.ownership.shape.name === name && e.ownership.shape.kind === wanted);
  return matches.length === 1 ? matches[0] : undefined;
}
