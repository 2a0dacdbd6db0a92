import { Injectable } from '@nestjs/common';
import {
  type ClientCallContract,
  type ClientCallRestoration,
  type ContentPart,
  firstOfferedToolChoice,
  type HistoryContext,
  InvalidRequestError,
  type JsonObject,
  type ModelItem,
  type NormalizedTool,
  type PublicItem,
  refusedCall,
  restoredClientFunction,
  type ToolHandler,
  ToolHandlerProvider,
} from '#tool-sdk/index.js';
import { COMPUTER, COMPUTER_USE } from './computer-use.tool-type.js';

export const COMPUTER_FUNCTION = 'computer';

const ENVIRONMENTS = ['windows', 'mac', 'linux', 'ubuntu', 'browser'] as const;

export interface ComputerUseParams {
  displayWidth: number;
  displayHeight: number;
  environment: (typeof ENVIRONMENTS)[number];
}

/** Each action of OpenAI's union and the fields it carries (`keys` optional where OpenAI has it optional). */
const ACTIONS: Record<string, { required: readonly string[]; optional: readonly string[] }> = {
  click: { required: ['button', 'x', 'y'], optional: ['keys'] },
  double_click: { required: ['x', 'y'], optional: ['keys'] },
  drag: { required: ['path'], optional: ['keys'] },
  keypress: { required: ['keys'], optional: [] },
  move: { required: ['x', 'y'], optional: ['keys'] },
  screenshot: { required: [], optional: [] },
  scroll: { required: ['x', 'y', 'scroll_x', 'scroll_y'], optional: ['keys'] },
  type: { required: ['text'], optional: [] },
  wait: { required: [], optional: [] },
};

const BUTTONS = new Set(['left', 'right', 'wheel', 'back', 'forward']);

const PARAMETERS: JsonObject = {
  type: 'object',
  properties: {
    action: {
      type: 'object',
      properties: {
        type: { type: 'string', enum: Object.keys(ACTIONS) },
        x: { type: 'integer' },
        y: { type: 'integer' },
        button: { type: 'string', enum: [...BUTTONS] },
        keys: { type: 'array', items: { type: 'string' } },
        path: { type: 'array', items: { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'integer' } }, required: ['x', 'y'] } },
        scroll_x: { type: 'integer' },
        scroll_y: { type: 'integer' },
        text: { type: 'string' },
      },
      required: ['type'],
    },
  },
  required: ['action'],
  additionalProperties: false,
};

function fieldError(field: string, value: unknown): string | null {
  switch (field) {
    case 'x':
    case 'y':
    case 'scroll_x':
    case 'scroll_y':
      return Number.isInteger(value) ? null : `action.${field} must be an integer.`;
    case 'button':
      return BUTTONS.has(value as string) ? null : 'action.button must be left, right, wheel, back or forward.';
    case 'keys':
      return value === null || (Array.isArray(value) && value.every((k) => typeof k === 'string')) ? null : 'action.keys must be a list of key names.';
    case 'text':
      return typeof value === 'string' ? null : 'action.text must be a string.';
    case 'path':
      return Array.isArray(value) && value.length > 0 && value.every((p) => p && Number.isInteger((p as JsonObject).x) && Number.isInteger((p as JsonObject).y))
        ? null
        : 'action.path must be a non-empty list of {x, y} points.';
    default:
      return null;
  }
}

/** One action object as an action of OpenAI's union (only its own fields), or why it is not one; `at` names it in the message. */
export function checkedAction(given: unknown, at = 'action'): { action: JsonObject } | { error: string } {
  if (!given || typeof given !== 'object' || Array.isArray(given)) return { error: `${at} must be an object with a "type".` };
  const a = given as JsonObject;
  const spec = typeof a.type === 'string' ? ACTIONS[a.type] : undefined;
  if (!spec) return { error: `${at}.type must be one of ${Object.keys(ACTIONS).join(', ')}.` };
  const action: JsonObject = { type: a.type };
  for (const field of spec.required) {
    if (a[field] === undefined) return { error: `${at}.${field} is required for a ${String(a.type)} action.` };
    const bad = fieldError(field, a[field]);
    if (bad) return { error: bad.replace(/^action/, at) };
    action[field] = a[field];
  }
  for (const field of spec.optional) {
    if (a[field] === undefined) continue;
    const bad = fieldError(field, a[field]);
    if (bad) return { error: bad.replace(/^action/, at) };
    action[field] = a[field];
  }
  // OpenAI's double click names its keys always (null when none are held).
  if (a.type === 'double_click' && action.keys === undefined) action.keys = null;
  return { action };
}

function parsedObject(args: string): JsonObject | null {
  try {
    const parsed = JSON.parse(args) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as JsonObject) : null;
  } catch {
    return null;
  }
}

/** The model's arguments as one `computer_call` action of OpenAI's union, or why they are not one. */
export function computerAction(args: string): { action: JsonObject } | { error: string } {
  const parsed = parsedObject(args);
  if (!parsed) return { error: 'The arguments must be a JSON object: write {"action": {"type": ...}}.' };
  if (parsed.action === undefined) return { error: 'The arguments must hold an "action" object.' };
  return checkedAction(parsed.action);
}

/** The GA tool's batch: `{"actions": [...]}`, each an action of the union. */
export function computerActions(args: string): { actions: JsonObject[] } | { error: string } {
  const parsed = parsedObject(args);
  if (!parsed || !Array.isArray(parsed.actions) || parsed.actions.length === 0)
    return { error: 'The arguments must hold a non-empty "actions" list: {"actions": [{"type": ...}]}.' };
  const actions: JsonObject[] = [];
  for (const [i, given] of parsed.actions.entries()) {
    const checked = checkedAction(given, `actions[${i}]`);
    if ('error' in checked) return checked;
    actions.push(checked.action);
  }
  return { actions };
}

function positiveInteger(decl: JsonObject, field: string, path: string): number {
  const value = decl[field];
  if (!Number.isInteger(value) || (value as number) <= 0) throw new InvalidRequestError(`${path}.${field} must be a positive integer.`, `${path}.${field}`);
  return value as number;
}

/**
 * `computer_use_preview`: client-owned. The model calls a function taking
 * one action of OpenAI's union; the call goes back as `computer_call
 * {action, pending_safety_checks}`, the client performs it and answers with
 * `computer_call_output {output: {type: "computer_screenshot", image_url |
 * file_id}}`, which the model is shown as an image. The gateway runs no
 * safety classifier: `pending_safety_checks` is always empty.
 */
@Injectable()
@ToolHandlerProvider({ type: COMPUTER_USE })
export class ComputerUseToolHandler implements ToolHandler<ComputerUseParams> {
  readonly type = COMPUTER_USE;
  readonly gatewayOwned = false;
  /** A declaration's function follows from its content alone: prepared lists may be reused. */
  readonly declarationsCacheable = true;
  readonly historyItemTypes = ['computer_call', 'computer_call_output'];
  readonly callOutputItemTypes = ['computer_call_output'];
  readonly toolChoice = firstOfferedToolChoice(COMPUTER_USE, ['computer_use_preview']);
  readonly clientCalls: ClientCallContract = {
    restore(args: string): ClientCallRestoration {
      const parsed = computerAction(args);
      if ('error' in parsed) return refusedCall('invalid_computer_action', parsed.error);
      return { fields: { action: parsed.action, pending_safety_checks: [] } };
    },
  };

  validate(decl: JsonObject, path: string): ComputerUseParams {
    const environment = decl.environment;
    if (typeof environment !== 'string' || !(ENVIRONMENTS as readonly string[]).includes(environment)) {
      throw new InvalidRequestError(`${path}.environment must be one of ${ENVIRONMENTS.join(', ')}.`, `${path}.environment`);
    }
    return {
      displayWidth: positiveInteger(decl, 'display_width', path),
      displayHeight: positiveInteger(decl, 'display_height', path),
      environment: environment as ComputerUseParams['environment'],
    };
  }

  normalize(p: ComputerUseParams, _discovered: unknown, ctx: { takenNames: ReadonlySet<string> }): NormalizedTool[] {
    const description =
      `Control a ${p.environment} computer whose screen is ${p.displayWidth}x${p.displayHeight} pixels: one action per call ` +
      '(click, double_click, drag, keypress, move, screenshot, scroll, type, wait); each call answers with a screenshot.';
    return restoredClientFunction({
      itemType: 'computer_call',
      functionName: COMPUTER_FUNCTION,
      idPrefix: 'cu',
      description: description,
      parameters: PARAMETERS,
      takenNames: ctx.takenNames,
    });
  }

  publicDeclaration(p: ComputerUseParams): JsonObject {
    return { type: 'computer_use_preview', display_width: p.displayWidth, display_height: p.displayHeight, environment: p.environment };
  }

  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    const callId = String(it.call_id);
    if (item.type === 'computer_call') {
      return [
        {
          type: 'function_call',
          call_id: callId,
          name: ctx.modelNameFor(COMPUTER_FUNCTION) ?? COMPUTER_FUNCTION,
          arguments: JSON.stringify(Array.isArray(it.actions) ? { actions: it.actions } : { action: it.action ?? {} }),
        },
      ];
    }
    return [{ type: 'function_call_output', call_id: callId, output: screenshotParts(it.output) }];
  }
}

const GA_PARAMETERS: JsonObject = {
  type: 'object',
  properties: { actions: { type: 'array', minItems: 1, items: (PARAMETERS.properties as JsonObject).action } },
  required: ['actions'],
  additionalProperties: false,
};

/**
 * `computer` (the GA computer tool, what the Agents SDK's `computerTool`
 * declares for any model but a `computer-use-preview` one): the same
 * contract as the preview, with no display in the declaration and a batch
 * of `actions` per call, performed in order before one screenshot.
 */
@Injectable()
@ToolHandlerProvider({ type: COMPUTER })
export class ComputerToolHandler implements ToolHandler<Record<string, never>> {
  readonly type = COMPUTER;
  readonly gatewayOwned = false;
  /** A declaration's function follows from its content alone: prepared lists may be reused. */
  readonly declarationsCacheable = true;
  // The preview's handler owns `computer_call` items in history; only the function's schema differs.
  readonly toolChoice = firstOfferedToolChoice(COMPUTER, ['computer', 'computer_use']);
  readonly clientCalls: ClientCallContract = {
    restore(args: string): ClientCallRestoration {
      const parsed = computerActions(args);
      if ('error' in parsed) return refusedCall('invalid_computer_action', parsed.error);
      return { fields: { actions: parsed.actions, pending_safety_checks: [] } };
    },
  };

  validate(): Record<string, never> {
    return {};
  }

  normalize(_p: Record<string, never>, _discovered: unknown, ctx: { takenNames: ReadonlySet<string> }): NormalizedTool[] {
    const description =
      'Control the user\u2019s computer: a list of actions per call (click, double_click, drag, keypress, move, screenshot, scroll, type, wait), ' +
      'performed in order; each call answers with a screenshot.';
    return restoredClientFunction({
      itemType: 'computer_call',
      functionName: COMPUTER_FUNCTION,
      idPrefix: 'cu',
      description: description,
      parameters: GA_PARAMETERS,
      takenNames: ctx.takenNames,
    });
  }

  publicDeclaration(): JsonObject {
    return { type: 'computer' };
  }
}

/** The screenshot as the model sees it: an image part after a line saying what it is. */
function screenshotParts(output: unknown): ContentPart[] {
  const shot = output && typeof output === 'object' ? (output as JsonObject) : {};
  const image: JsonObject = { type: 'input_image', detail: 'auto' };
  if (typeof shot.image_url === 'string' && shot.image_url) image.image_url = shot.image_url;
  else if (typeof shot.file_id === 'string' && shot.file_id) image.file_id = shot.file_id;
  else return [{ type: 'input_text', text: 'The action was performed; the client sent no screenshot.' }];
  return [{ type: 'input_text', text: 'Screenshot after the action:' }, image as ContentPart];
}
