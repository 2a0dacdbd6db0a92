import { Injectable } from '@nestjs/common';
import {
  type HistoryContext,
  InvalidRequestError,
  type JsonObject,
  type ModelItem,
  type NormalizedTool,
  optionalString,
  parametersSchema,
  type PublicItem,
  type ToolHandler,
  ToolHandlerProvider,
} from '#tool-sdk/index.js';

/** The model-visible name of the search function (the type has no name of its own). */
export const TOOL_SEARCH_FUNCTION = 'tool_search';

export interface ToolSearchParams {
  description: string;
  parameters: JsonObject;
  /** Whether the client declared its own parameter schema (echoed as sent). */
  declaredParameters: JsonObject | null;
  declaredDescription: string | null;
}

const DEFAULT_DESCRIPTION =
  'Search for more tools. Some tools are not loaded yet: describe what you need to do, and the tools that match ' + 'are loaded for you to call in your next step.';

const DEFAULT_PARAMETERS: JsonObject = {
  type: 'object',
  properties: {
    query: { type: 'string', description: 'What the tool you need should do, in a few words.' },
    limit: { type: 'integer', description: 'Most tools to load.' },
  },
  required: ['query'],
  additionalProperties: false,
};

/**
 * `tool_search` with `execution: "client"` (Codex declares it for models
 * that load tools on demand): client-owned. The model calls a function;
 * the call goes back as `tool_search_call {call_id, execution, arguments}`,
 * the client runs the search and answers with `tool_search_output {call_id,
 * tools}`, and the tools it lists are callable from then on (registered by
 * core through `historyDeclarations`, like the request's own tools).
 *
 * `execution: "server"` would need a catalog of deferred tools in the
 * gateway to search; there is none, so it is refused rather than offered
 * as a tool that finds nothing.
 */
@Injectable()
@ToolHandlerProvider({ type: 'tool_search' })
export class ToolSearchToolHandler implements ToolHandler<ToolSearchParams> {
  readonly type = 'tool_search';
  readonly gatewayOwned = false;
  /** The declaration alone says what is offered; the tools a search loaded come from history and are layered per request. */
  readonly declarationsCacheable = true;
  readonly historyItemTypes = ['tool_search_call', 'tool_search_output'];

  validate(decl: JsonObject, path: string): ToolSearchParams {
    if (decl.execution !== 'client') {
      throw new InvalidRequestError(
        `${path}.execution must be "client": this gateway hands tool searches back to the client, and has no catalog of deferred tools to search itself.`,
        `${path}.execution`,
      );
    }
    const declaredDescription = optionalString(decl, 'description', path) ?? null;
    const declaredParameters = decl.parameters === undefined || decl.parameters === null ? null : parametersSchema(decl, path);
    return {
      description: declaredDescription ?? DEFAULT_DESCRIPTION,
      parameters: declaredParameters ?? DEFAULT_PARAMETERS,
      declaredParameters,
      declaredDescription,
    };
  }

  normalize(p: ToolSearchParams): NormalizedTool[] {
    return [
      {
        fn: { type: 'function', name: TOOL_SEARCH_FUNCTION, description: p.description, parameters: p.parameters },
        toolName: TOOL_SEARCH_FUNCTION,
        // Handed back as a client-run search: no name, its arguments the JSON value the model wrote.
        clientShape: { kind: 'tool_search_call', name: TOOL_SEARCH_FUNCTION, relay: { kind: 'json' }, idPrefix: 'tsc', omitName: true, leadingFields: { execution: 'client' } },
      },
    ];
  }

  publicDeclaration(p: ToolSearchParams): JsonObject {
    return { type: 'tool_search', execution: 'client', description: p.declaredDescription, parameters: p.declaredParameters };
  }

  historyDeclarations(item: PublicItem, path: string): JsonObject[] {
    const it = item as JsonObject;
    if (it.type !== 'tool_search_output') return [];
    if (!Array.isArray(it.tools)) throw new InvalidRequestError(`${path}.tools must be an array of tool declarations.`, `${path}.tools`);
    return it.tools as JsonObject[];
  }

  /**
   * Replayed as the function call the model made and its output. The output
   * names the loaded tools; their schemas reach the model in the tool list,
   * where a function-calling model reads them.
   */
  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    const callId = typeof it.call_id === 'string' && it.call_id !== '' ? it.call_id : String(it.id);
    if (it.type === 'tool_search_call') {
      const args = typeof it.arguments === 'string' ? it.arguments : JSON.stringify(it.arguments ?? {});
      return [{ type: 'function_call', call_id: callId, name: ctx.modelNameFor(TOOL_SEARCH_FUNCTION) ?? TOOL_SEARCH_FUNCTION, arguments: args }];
    }
    const tools = Array.isArray(it.tools) ? (it.tools as JsonObject[]) : [];
    const loaded = tools.map((t) => ({ type: t.type, name: t.name ?? null, description: t.description ?? null }));
    const note = loaded.length > 0 ? 'These tools are loaded and can be called now.' : 'No tool matched this search.';
    return [{ type: 'function_call_output', call_id: callId, output: JSON.stringify({ loaded_tools: loaded, note }) }];
  }
}
