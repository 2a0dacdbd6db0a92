import { Injectable } from '@nestjs/common';
import {
  type ClientCallContract,
  type ClientCallRestoration,
  firstOfferedToolChoice,
  type HistoryContext,
  InvalidRequestError,
  type JsonObject,
  type ModelItem,
  type NormalizedTool,
  optionalObject,
  type PlannedEvent,
  type PublicItem,
  restoredClientFunction,
  type ToolHandler,
  ToolHandlerProvider,
} from '#tool-sdk/index.js';
import { SHELL } from './shell.tool-type.js';

/** The function the model calls; a request that declares a function of that name gets a suffixed one. */
export const SHELL_FUNCTION = 'shell';

export interface ShellToolParams {
  /** `{type: "local", skills?}` as declared, or null: where the client runs the commands. */
  environment: JsonObject | null;
}

const PARAMETERS: JsonObject = {
  type: 'object',
  properties: {
    commands: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'Shell commands to run in order, each a command line.' },
    timeout_ms: { type: ['integer', 'null'], description: 'Most milliseconds the commands may run.' },
    max_output_length: { type: ['integer', 'null'], description: 'Most characters of output to keep per command.' },
  },
  required: ['commands'],
  additionalProperties: false,
};

const DESCRIPTION = 'Run shell commands on the user\u2019s machine. Each command runs in order; you get each command\u2019s stdout, stderr and exit code.';

function refusal(message: string): ClientCallRestoration {
  return { error: JSON.stringify({ error: { code: 'invalid_shell_call', message } }) };
}

function optionalCount(args: JsonObject, field: string): number | null | string {
  const value = args[field];
  if (value === undefined || value === null) return null;
  return Number.isInteger(value) && (value as number) > 0 ? (value as number) : `${field} must be a positive integer or null.`;
}

/** The model's arguments as a `shell_call` action, or why they are not one. */
export function shellAction(args: string): { action: JsonObject } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return { error: 'The arguments are not JSON: write {"commands": ["..."]}.' };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { error: 'The arguments must be an object with "commands".' };
  const p = parsed as JsonObject;
  if (!Array.isArray(p.commands) || p.commands.length === 0 || !p.commands.every((c) => typeof c === 'string' && c.length > 0)) {
    return { error: '"commands" must be a non-empty list of command lines.' };
  }
  const timeout = optionalCount(p, 'timeout_ms');
  if (typeof timeout === 'string') return { error: timeout };
  const maxOutput = optionalCount(p, 'max_output_length');
  if (typeof maxOutput === 'string') return { error: maxOutput };
  return { action: { commands: p.commands as string[], timeout_ms: timeout, max_output_length: maxOutput } };
}

/** OpenAI's command events: each command announced, written and done, before the item is. */
function commandEvents(commands: readonly string[]): PlannedEvent[] {
  return commands.flatMap((command, command_index) => [
    { type: 'response.shell_call_command.added', command_index, command: '' },
    { type: 'response.shell_call_command.delta', command_index, delta: command },
    { type: 'response.shell_call_command.done', command_index, command },
  ]);
}

/** One command's output as the model reads it, cut to the length the call asked for. */
function commandResult(entry: JsonObject, max: number | null): JsonObject {
  const cut = (text: unknown) => {
    const s = typeof text === 'string' ? text : '';
    return max !== null && s.length > max ? `${s.slice(0, max)}\n[... ${s.length - max} more characters cut]` : s;
  };
  const outcome = entry.outcome && typeof entry.outcome === 'object' ? (entry.outcome as JsonObject) : {};
  return { stdout: cut(entry.stdout), stderr: cut(entry.stderr), outcome: outcome.type === 'timeout' ? 'timeout' : `exit ${String(outcome.exit_code ?? 0)}` };
}

/**
 * `shell`: client-owned. The model calls a function taking `commands`,
 * `timeout_ms` and `max_output_length`; the call goes back as `shell_call
 * {action, environment}` (with OpenAI's `response.shell_call_command.*`
 * events), the client runs the commands and answers with `shell_call_output
 * {output: [{stdout, stderr, outcome}]}`. A call whose arguments are not a
 * list of commands never reaches the client: the model reads why.
 */
@Injectable()
@ToolHandlerProvider({ type: SHELL })
export class ShellToolHandler implements ToolHandler<ShellToolParams> {
  readonly type = SHELL;
  readonly gatewayOwned = false;
  /** A declaration's function follows from its content alone: prepared lists may be reused. */
  readonly declarationsCacheable = true;
  readonly historyItemTypes = ['shell_call', 'shell_call_output'];
  readonly callOutputItemTypes = ['shell_call_output'];
  readonly toolChoice = firstOfferedToolChoice(SHELL, ['shell']);
  readonly clientCalls: ClientCallContract = {
    restore(args: string): ClientCallRestoration {
      const parsed = shellAction(args);
      if ('error' in parsed) return refusal(parsed.error);
      return { fields: { action: parsed.action }, events: commandEvents(parsed.action.commands as string[]) };
    },
  };

  validate(decl: JsonObject, path: string): ShellToolParams {
    const environment = decl.environment === null ? null : (optionalObject(decl, 'environment', path) ?? null);
    if (environment && environment.type !== 'local') {
      throw new InvalidRequestError(
        `${path}.environment.type must be "local": this gateway hands shell calls back to the client, and runs no hosted shell container.`,
        `${path}.environment.type`,
      );
    }
    return { environment };
  }

  normalize(p: ShellToolParams, _discovered: unknown, ctx: { takenNames: ReadonlySet<string> }): NormalizedTool[] {
    return restoredClientFunction({
      itemType: 'shell_call',
      functionName: SHELL_FUNCTION,
      idPrefix: 'sh',
      description: DESCRIPTION,
      parameters: PARAMETERS,
      takenNames: ctx.takenNames,
      trailingFields: { environment: p.environment },
    });
  }

  publicDeclaration(p: ShellToolParams): JsonObject {
    return { type: 'shell', environment: p.environment };
  }

  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    const callId = String(it.call_id);
    if (item.type === 'shell_call') {
      const action = it.action && typeof it.action === 'object' ? (it.action as JsonObject) : {};
      const args = { commands: action.commands ?? [], timeout_ms: action.timeout_ms ?? null, max_output_length: action.max_output_length ?? null };
      return [{ type: 'function_call', call_id: callId, name: ctx.modelNameFor(SHELL_FUNCTION) ?? SHELL_FUNCTION, arguments: JSON.stringify(args) }];
    }
    const max = Number.isInteger(it.max_output_length) ? (it.max_output_length as number) : null;
    const output = Array.isArray(it.output) ? (it.output as JsonObject[]).map((entry) => commandResult(entry, max)) : [];
    return [{ type: 'function_call_output', call_id: callId, output: JSON.stringify(output) }];
  }
}
