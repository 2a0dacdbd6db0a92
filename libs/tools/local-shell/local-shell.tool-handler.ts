import { Injectable } from '@nestjs/common';
import {
  type ClientCallContract,
  type ClientCallRestoration,
  firstOfferedToolChoice,
  type HistoryContext,
  type JsonObject,
  type ModelItem,
  type NormalizedTool,
  outputContent,
  type PublicItem,
  refusedCall,
  restoredClientFunction,
  type ToolHandler,
  ToolHandlerProvider,
} from '#tool-sdk/index.js';
import { LOCAL_SHELL } from './local-shell.tool-type.js';

export const LOCAL_SHELL_FUNCTION = 'local_shell';

const PARAMETERS: JsonObject = {
  type: 'object',
  properties: {
    command: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'The program and its arguments, e.g. ["ls", "-la"].' },
    env: { type: 'object', additionalProperties: { type: 'string' }, description: 'Environment variables to set.' },
    working_directory: { type: ['string', 'null'] },
    timeout_ms: { type: ['integer', 'null'] },
    user: { type: ['string', 'null'] },
  },
  required: ['command'],
  additionalProperties: false,
};

const DESCRIPTION = 'Run one command on the user\u2019s machine and read its output.';

function nullableString(value: unknown): string | null | undefined {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : undefined;
}

/** The model's arguments as a `local_shell_call` exec action, or why they are not one. */
export function execAction(args: string): { action: JsonObject } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return { error: 'The arguments are not JSON: write {"command": ["program", "arg"]}.' };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { error: 'The arguments must be an object with "command".' };
  const p = parsed as JsonObject;
  if (!Array.isArray(p.command) || p.command.length === 0 || !p.command.every((c) => typeof c === 'string')) {
    return { error: '"command" must be a non-empty list of strings: the program and its arguments.' };
  }
  const env = p.env ?? {};
  if (typeof env !== 'object' || Array.isArray(env) || !Object.values(env as JsonObject).every((v) => typeof v === 'string')) {
    return { error: '"env" must map variable names to strings.' };
  }
  const workingDirectory = nullableString(p.working_directory);
  const user = nullableString(p.user);
  if (workingDirectory === undefined || user === undefined) return { error: '"working_directory" and "user" must be strings or null.' };
  const timeout = p.timeout_ms ?? null;
  if (timeout !== null && !(Number.isInteger(timeout) && (timeout as number) > 0)) return { error: '"timeout_ms" must be a positive integer or null.' };
  // Absent rather than null: OpenAI's own items leave them out, and the AI SDK's schema refuses a null.
  const optional = {
    ...(timeout !== null ? { timeout_ms: timeout } : {}),
    ...(user !== null ? { user } : {}),
    ...(workingDirectory !== null ? { working_directory: workingDirectory } : {}),
  };
  return { action: { type: 'exec', command: p.command as string[], env, ...optional } };
}

/**
 * `local_shell` (the Codex model's shell): client-owned. The model calls a
 * function taking the command's argv, `env`, `working_directory`,
 * `timeout_ms`; the call goes back as `local_shell_call {action: {type:
 * "exec", ...}}`, the client runs it and answers with
 * `local_shell_call_output {call_id, output}` (OpenAI's own input item names
 * the call by `id`; either is accepted).
 */
@Injectable()
@ToolHandlerProvider({ type: LOCAL_SHELL })
export class LocalShellToolHandler implements ToolHandler<Record<string, never>> {
  readonly type = LOCAL_SHELL;
  readonly gatewayOwned = false;
  /** A declaration's function follows from its content alone: prepared lists may be reused. */
  readonly declarationsCacheable = true;
  readonly historyItemTypes = ['local_shell_call', 'local_shell_call_output'];
  // No `callOutputItemTypes`: core matches outputs to calls by `call_id`, and OpenAI's form of this output names its call by `id`.
  readonly toolChoice = firstOfferedToolChoice(LOCAL_SHELL, ['local_shell']);
  readonly clientCalls: ClientCallContract = {
    restore(args: string): ClientCallRestoration {
      const parsed = execAction(args);
      if ('error' in parsed) return refusedCall('invalid_local_shell_call', parsed.error);
      return { fields: { action: parsed.action } };
    },
  };

  validate(): Record<string, never> {
    return {};
  }

  normalize(_p: Record<string, never>, _discovered: unknown, ctx: { takenNames: ReadonlySet<string> }): NormalizedTool[] {
    return restoredClientFunction({
      itemType: 'local_shell_call',
      functionName: LOCAL_SHELL_FUNCTION,
      idPrefix: 'lsh',
      description: DESCRIPTION,
      parameters: PARAMETERS,
      takenNames: ctx.takenNames,
    });
  }

  publicDeclaration(): JsonObject {
    return { type: 'local_shell' };
  }

  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    if (item.type === 'local_shell_call') {
      const action = it.action && typeof it.action === 'object' ? (it.action as JsonObject) : {};
      const args = {
        command: action.command ?? [],
        env: action.env ?? {},
        working_directory: action.working_directory ?? null,
        timeout_ms: action.timeout_ms ?? null,
        user: action.user ?? null,
      };
      return [{ type: 'function_call', call_id: String(it.call_id), name: ctx.modelNameFor(LOCAL_SHELL_FUNCTION) ?? LOCAL_SHELL_FUNCTION, arguments: JSON.stringify(args) }];
    }
    // OpenAI's input item carries the model's call id as `id`; the AI SDK sends `call_id`.
    const callId = typeof it.call_id === 'string' && it.call_id !== '' ? it.call_id : String(it.id);
    return [{ type: 'function_call_output', call_id: callId, output: outputContent(it.output) }];
  }
}
