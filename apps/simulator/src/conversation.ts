/**
 * One view of the conversation whichever dialect it arrived in, so that the simulated model
 * behaves identically behind `/v1/responses` and `/v1/chat/completions`.
 */

export type JsonSchema = Record<string, unknown>;

export type Turn =
  | { kind: 'system' | 'user' | 'assistant' | 'reasoning'; text: string }
  | { kind: 'call'; callId: string; name: string; arguments: string }
  | { kind: 'tool_output'; callId: string; output: string };

export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema | undefined;
}

export type ToolChoice = { mode: 'auto' | 'none' | 'required' } | { mode: 'named'; name: string };

export interface Conversation {
  turns: Turn[];
  tools: ToolSpec[];
  toolChoice: ToolChoice;
  maxOutputTokens: number | undefined;
}

export interface ConversationFocus {
  /** Raw text of the last user message ('' when there is none). */
  prompt: string;
  /** 1 + the number of tool-output groups after the last user message. */
  round: number;
  /** The tool outputs after the most recent call group, in order; empty unless the last turn is one. */
  trailingOutputs: string[];
  lastKind: Turn['kind'] | undefined;
}

/** A request vLLM itself would reject with 400 before reaching the model. */
export class BadRequestError extends Error {
  override readonly name = 'BadRequestError';
  constructor(
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

export function fromResponsesRequest(body: Json): Conversation {
  const turns: Turn[] = [];
  if (typeof body.instructions === 'string' && body.instructions !== '') {
    turns.push({ kind: 'system', text: body.instructions });
  }
  const input = body.input;
  if (typeof input === 'string') {
    turns.push({ kind: 'user', text: input });
  } else if (Array.isArray(input)) {
    input.forEach((item, index) => turns.push(...responsesItemTurns(item, index)));
  } else {
    throw new BadRequestError('`input` must be a string or an array of input items', 'input');
  }
  return {
    turns,
    tools: normaliseTools(body.tools),
    toolChoice: normaliseToolChoice(body.tool_choice),
    maxOutputTokens: positiveInteger(body.max_output_tokens, 'max_output_tokens'),
  };
}

function responsesItemTurns(item: unknown, index: number): Turn[] {
  if (!isObject(item)) throw new BadRequestError(`input[${index}] must be an object`, 'input');
  const type = typeof item.type === 'string' ? item.type : 'message';
  switch (type) {
    case 'message':
      return [{ kind: roleKind(item.role, index, 'input'), text: contentText(item.content) }];
    case 'function_call':
    case 'custom_tool_call':
      return [
        {
          kind: 'call',
          callId: String(item.call_id ?? ''),
          name: String(item.name ?? ''),
          arguments: String(item.arguments ?? item.input ?? ''),
        },
      ];
    case 'reasoning':
      return [{ kind: 'reasoning', text: contentText(item.content) || contentText(item.summary) }];
    default:
      // vLLM only speaks function tools, yet every `*_output` item answers some call.
      if (type.endsWith('_output')) {
        return [{ kind: 'tool_output', callId: String(item.call_id ?? ''), output: outputText(item.output) }];
      }
      return [];
  }
}

export function fromChatRequest(body: Json): Conversation {
  if (!Array.isArray(body.messages)) throw new BadRequestError('`messages` must be an array', 'messages');
  const turns: Turn[] = [];
  body.messages.forEach((message, index) => {
    if (!isObject(message)) throw new BadRequestError(`messages[${index}] must be an object`, 'messages');
    if (message.role === 'tool' || message.role === 'function') {
      turns.push({
        kind: 'tool_output',
        callId: String(message.tool_call_id ?? message.name ?? ''),
        output: outputText(message.content),
      });
      return;
    }
    const kind = roleKind(message.role, index, 'messages');
    const text = contentText(message.content);
    const reasoning = message.reasoning_content ?? message.reasoning;
    if (kind === 'assistant' && typeof reasoning === 'string' && reasoning !== '') {
      turns.push({ kind: 'reasoning', text: reasoning });
    }
    if (text !== '' || kind !== 'assistant') turns.push({ kind, text });
    if (kind === 'assistant' && Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        if (!isObject(call)) continue;
        const fn = isObject(call.function) ? call.function : {};
        turns.push({
          kind: 'call',
          callId: String(call.id ?? ''),
          name: String(fn.name ?? ''),
          arguments: String(fn.arguments ?? ''),
        });
      }
    }
  });
  return {
    turns,
    tools: normaliseTools(body.tools),
    toolChoice: normaliseToolChoice(body.tool_choice),
    maxOutputTokens: positiveInteger(body.max_completion_tokens, 'max_completion_tokens') ?? positiveInteger(body.max_tokens, 'max_tokens'),
  };
}

export function focusOf(conversation: Conversation): ConversationFocus {
  const { turns } = conversation;
  let lastUser = -1;
  for (let i = turns.length - 1; i >= 0; i--) {
    if (turns[i].kind === 'user') {
      lastUser = i;
      break;
    }
  }
  let groups = 0;
  for (let i = lastUser + 1; i < turns.length; i++) {
    if (turns[i].kind === 'tool_output' && turns[i - 1]?.kind !== 'tool_output') groups++;
  }
  const trailingOutputs: string[] = [];
  for (let i = turns.length - 1; i > lastUser; i--) {
    const turn = turns[i];
    if (turn.kind !== 'tool_output') break;
    trailingOutputs.unshift(turn.output);
  }
  const prompt = lastUser >= 0 ? (turns[lastUser] as { text: string }).text : '';
  return { prompt, round: 1 + groups, trailingOutputs, lastKind: turns.at(-1)?.kind };
}

function roleKind(role: unknown, index: number, param: string): 'system' | 'user' | 'assistant' {
  if (role === 'user') return 'user';
  if (role === 'assistant') return 'assistant';
  if (role === 'system' || role === 'developer') return 'system';
  throw new BadRequestError(`${param}[${index}].role must be one of system, developer, user, assistant`, param);
}

/** Text of a message's content, whether a string or an array of typed parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => {
      if (typeof part === 'string') return part;
      if (!isObject(part)) return '';
      if (typeof part.text === 'string') return part.text;
      if (typeof part.refusal === 'string') return part.refusal;
      return '';
    })
    .filter((text) => text !== '')
    .join('\n');
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return contentText(output);
  return output === undefined || output === null ? '' : JSON.stringify(output);
}

function normaliseTools(tools: unknown): ToolSpec[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw new BadRequestError('`tools` must be an array', 'tools');
  const specs: ToolSpec[] = [];
  for (const tool of tools) {
    if (!isObject(tool) || tool.type !== 'function') continue;
    // Chat nests the declaration under `function`; Responses flattens it.
    const fn = isObject(tool.function) ? tool.function : tool;
    if (typeof fn.name !== 'string') continue;
    specs.push({
      name: fn.name,
      description: typeof fn.description === 'string' ? fn.description : '',
      parameters: isObject(fn.parameters) ? fn.parameters : undefined,
    });
  }
  return specs;
}

function normaliseToolChoice(choice: unknown): ToolChoice {
  if (choice === undefined || choice === null || choice === 'auto') return { mode: 'auto' };
  if (choice === 'none' || choice === 'required') return { mode: choice };
  if (isObject(choice)) {
    const name = typeof choice.name === 'string' ? choice.name : isObject(choice.function) ? choice.function.name : undefined;
    if (typeof name === 'string') return { mode: 'named', name };
  }
  throw new BadRequestError('`tool_choice` must be "auto", "none", "required" or name a function', 'tool_choice');
}

function positiveInteger(value: unknown, param: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new BadRequestError(`\`${param}\` must be a positive integer`, param);
  }
  return value;
}
