import type { Conversation, ConversationFocus, ToolSpec } from './conversation.js';
import type { Directives } from './directives.js';
import { fillSchema } from './schema-filler.js';

/**
 * What the simulated model "says" for one request, independent of the wire dialect. Everything here
 * is a pure function of the conversation, the directives and the options, so runs are repeatable.
 */

export interface PlannedCall {
  name: string;
  /** JSON text, spaced the way vLLM's tool parsers print it (`{"a": 1, "b": [2, 3]}`). */
  arguments: string;
}

export interface ModelPlan {
  reasoning: string | null;
  calls: PlannedCall[];
  text: string | null;
  /** The output-token limit cut the answer short. */
  incomplete: boolean;
  usage: { inputTokens: number; outputTokens: number; reasoningTokens: number };
}

export interface BehaviourOptions {
  /** Emit a short reasoning item before every answer. */
  reasoning: boolean;
}

export const TOOL_RESULT_PREFIX = 'Based on the tool result: ';

export function planTurn(conversation: Conversation, focus: ConversationFocus, directives: Directives, options: BehaviourOptions): ModelPlan {
  const prompt = directives.cleanText;
  const calls = conversation.toolChoice.mode === 'none' ? [] : chooseCalls(conversation, focus, directives, prompt);
  let text: string | null = null;
  if (calls.length === 0) {
    if (directives.say !== undefined) text = directives.say;
    else if (directives.tokens !== undefined) text = fillerText(directives.tokens);
    else if (focus.lastKind === 'tool_output') text = TOOL_RESULT_PREFIX + focus.trailingOutputs.join('\n');
    else text = defaultAnswer(prompt);
  }
  const reasoning = directives.reason ?? (options.reasoning ? defaultReasoning(prompt, calls, focus.lastKind === 'tool_output') : null);
  return budget({ reasoning, calls, text }, conversation.maxOutputTokens, inputTokens(conversation));
}

function chooseCalls(conversation: Conversation, focus: ConversationFocus, directives: Directives, prompt: string): PlannedCall[] {
  const scripted = directives.calls.filter((c) => c.round === 'always' || c.round === focus.round);
  if (scripted.length > 0) return scripted.map((c) => ({ name: c.name, arguments: pythonJson(c.args) }));
  // Only a fresh user turn can trigger unscripted calls; after a tool result the model answers,
  // which keeps `required` and keyword matches from looping forever.
  if (focus.lastKind === 'tool_output' || directives.say !== undefined || directives.tokens !== undefined) return [];
  const { toolChoice, tools } = conversation;
  let tool: ToolSpec | undefined;
  if (toolChoice.mode === 'named') {
    tool = tools.find((t) => t.name === toolChoice.name) ?? { name: toolChoice.name, description: '', parameters: undefined };
  } else if (toolChoice.mode === 'required') {
    tool = bestMatch(tools, prompt)?.tool ?? tools[0];
  } else if (focus.lastKind === 'user') {
    const match = bestMatch(tools, prompt);
    if (match && match.score >= MEANINGFUL_SCORE) tool = match.tool;
  }
  return tool ? [{ name: tool.name, arguments: pythonJson(fillSchema(tool.parameters, prompt)) }] : [];
}

/** One word of the tool's name, or two of its description, must appear in the prompt. */
const MEANINGFUL_SCORE = 2;

const MATCH_STOP_WORDS = new Set(
  `a about after all also an and any are as at be been but by can could did do does for from get got had has have
  how i if in into is it its just let like make me more my no not of on or our out over please run set so some
  than that the their them then there these they this to up us use used using via want was we were what when where
  which while who why will with would you your current given one tool function call fetch list return returns data
  value values result results information info specified provided new`
    .split(/\s+/)
    .filter(Boolean),
);

export function bestMatch(tools: ToolSpec[], prompt: string): { tool: ToolSpec; score: number } | undefined {
  const promptWords = new Set(words(prompt));
  let best: { tool: ToolSpec; score: number } | undefined;
  for (const tool of tools) {
    const nameWords = new Set(words(tool.name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_\-.]+/g, ' ')));
    const descriptionWords = new Set(words(tool.description).filter((w) => !nameWords.has(w)));
    let score = 0;
    for (const w of nameWords) if (promptWords.has(w)) score += 2;
    for (const w of descriptionWords) if (promptWords.has(w)) score += 1;
    if (score > 0 && (best === undefined || score > best.score)) best = { tool, score };
  }
  return best;
}

function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1 && !MATCH_STOP_WORDS.has(w)).map(stem);
}

function stem(word: string): string {
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('es') && /(s|x|z|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

function defaultAnswer(prompt: string): string {
  if (prompt === '') return 'This is the Switchyard simulator, not a real model. There was no question to answer.';
  return `You asked: "${firstWords(prompt, 40)}". This answer comes from the Switchyard simulator, not a real model.`;
}

function defaultReasoning(prompt: string, calls: PlannedCall[], afterTool: boolean): string {
  const topic = firstWords(prompt, 12).replace(/[\s.?!]+$/, '') || 'nothing in particular';
  if (calls.length > 0) return `The user wants: ${topic}. I should call ${calls.map((c) => c.name).join(', ')}.`;
  if (afterTool) return 'The tool returned its result. I will report it back.';
  return `The user wants: ${topic}. I can answer directly.`;
}

const FILLER = ['sim', 'net', 'bit', 'log', 'hub', 'cpu', 'ram', 'row', 'key', 'map', 'set', 'box'];

/** Exactly `count` tokens of three letters, so that at the default 4 characters per delta each token is one delta. */
export function fillerText(count: number): string {
  const out = new Array<string>(count);
  for (let i = 0; i < count; i++) out[i] = FILLER[i % FILLER.length];
  return out.join(' ');
}

function firstWords(text: string, count: number): string {
  const pieces = text.split(/\s+/).filter(Boolean);
  return pieces.length <= count ? pieces.join(' ') : `${pieces.slice(0, count).join(' ')} ...`;
}

/** The simulator's token: a whitespace-separated piece. Crude, but consistent everywhere it is counted. */
export function countTokens(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = text.charCodeAt(i) <= 32;
    if (!space && !inWord) count++;
    inWord = !space;
  }
  return count;
}

function callTokens(call: PlannedCall): number {
  return 1 + countTokens(call.arguments);
}

/** Prefix of `text` holding its first `limit` tokens. */
function firstTokens(text: string, limit: number): string {
  const re = /\S+/g;
  let end = 0;
  for (let n = 0; n < limit; n++) {
    const match = re.exec(text);
    if (!match) return text;
    end = match.index + match[0].length;
  }
  return text.slice(0, end);
}

// Chat templates add a few tokens of framing per message; the exact figure does not matter.
const TURN_START = '<|im_start|>';
const TURN_END = '<|im_end|>';

export function inputTokens(conversation: Conversation): number {
  // Counted without building the list: every inference request pays for this, `/tokenize` rarely.
  let total = 0;
  for (const turn of conversation.turns) {
    total += FRAMING_TOKENS;
    if (turn.kind === 'call') total += 1 + countTokens(turn.arguments);
    else if (turn.kind === 'tool_output') total += countTokens(turn.output);
    else total += countTokens(turn.text);
  }
  for (const tool of conversation.tools) total += countTokens(toolText(tool));
  return total;
}

/** Start marker, role, end marker. */
const FRAMING_TOKENS = 3;

/**
 * The prompt as the simulator's "tokenizer" sees it: each turn framed by a
 * start marker, its role and an end marker around its words, then the tool
 * definitions' words. `/tokenize` returns this list and every response's
 * `input_tokens` counts it (`inputTokens`), so the two always agree, as they
 * do on vLLM.
 */
export function promptTokens(conversation: Conversation): string[] {
  const tokens: string[] = [];
  for (const turn of conversation.turns) {
    tokens.push(TURN_START, turn.kind);
    if (turn.kind === 'call') tokens.push(turn.name, ...pieces(turn.arguments));
    else if (turn.kind === 'tool_output') tokens.push(...pieces(turn.output));
    else tokens.push(...pieces(turn.text));
    tokens.push(TURN_END);
  }
  for (const tool of conversation.tools) tokens.push(...pieces(toolText(tool)));
  return tokens;
}

function toolText(tool: Conversation['tools'][number]): string {
  return `${tool.name} ${tool.description} ${JSON.stringify(tool.parameters ?? {}).replace(/[{}[\]",:]/g, ' ')}`;
}

/** The pieces `countTokens` counts: runs of characters above U+0020. */
function pieces(text: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const space = i === text.length || text.charCodeAt(i) <= 32;
    if (!space && start < 0) start = i;
    else if (space && start >= 0) {
      out.push(text.slice(start, i));
      start = -1;
    }
  }
  return out;
}

/** A stable id for a simulator token, in the range of a real vocabulary. */
export function tokenId(token: string): number {
  if (token === TURN_START) return 151644;
  if (token === TURN_END) return 151645;
  let hash = 2166136261;
  for (let i = 0; i < token.length; i++) hash = Math.imul(hash ^ token.charCodeAt(i), 16777619);
  return (hash >>> 0) % 151643;
}

function budget(draft: { reasoning: string | null; calls: PlannedCall[]; text: string | null }, limit: number | undefined, input: number): ModelPlan {
  let left = limit ?? Infinity;
  let incomplete = false;
  let reasoning = draft.reasoning;
  let reasoningTokens = 0;
  if (reasoning !== null) {
    reasoningTokens = countTokens(reasoning);
    if (reasoningTokens > left) {
      reasoning = firstTokens(reasoning, left);
      reasoningTokens = left;
      incomplete = true;
    }
    left -= reasoningTokens;
  }
  const calls: PlannedCall[] = [];
  let callTokensUsed = 0;
  for (const call of draft.calls) {
    // A call cut in half would not parse, so vLLM's tool parser would drop it: keep whole calls only.
    const cost = callTokens(call);
    if (incomplete || cost > left) {
      incomplete = true;
      break;
    }
    calls.push(call);
    left -= cost;
    callTokensUsed += cost;
  }
  let text = draft.text;
  let textTokens = 0;
  if (text !== null) {
    textTokens = countTokens(text);
    if (incomplete) {
      text = null;
      textTokens = 0;
    } else if (textTokens > left) {
      text = left > 0 ? firstTokens(text, left) : null;
      textTokens = left;
      incomplete = true;
    }
  }
  return {
    reasoning,
    calls,
    text,
    incomplete,
    usage: { inputTokens: input, outputTokens: reasoningTokens + callTokensUsed + textTokens, reasoningTokens },
  };
}

/**
 * Splits text into stream deltas of at most `chunkChars` characters, cutting between word and
 * punctuation runs the way a tokenizer would (`{"`, `city`, `":`, ` "`, `San` ...). The pieces
 * always concatenate back to the input.
 */
export function splitIntoDeltas(text: string, chunkChars: number): string[] {
  const size = Math.max(1, Math.floor(chunkChars));
  const pieces = text.match(/\s*(?:[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]+)|\s+/gu) ?? [];
  const deltas: string[] = [];
  let current = '';
  for (const piece of pieces) {
    for (const part of piece.length > size ? codePointChunks(piece, size) : [piece]) {
      if (current.length + part.length > size && current !== '') {
        deltas.push(current);
        current = '';
      }
      current += part;
    }
  }
  if (current !== '') deltas.push(current);
  return deltas;
}

function codePointChunks(text: string, size: number): string[] {
  const chunks: string[] = [];
  let current = '';
  for (const ch of text) {
    if (current.length + ch.length > size && current !== '') {
      chunks.push(current);
      current = '';
    }
    current += ch;
  }
  if (current !== '') chunks.push(current);
  return chunks;
}

/** JSON with Python's `json.dumps` separators, which is what vLLM's tool parsers emit. */
export function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function deltaCount(plan: ModelPlan, chunkChars: number): number {
  let count = 0;
  if (plan.reasoning) count += splitIntoDeltas(plan.reasoning, chunkChars).length;
  for (const call of plan.calls) count += splitIntoDeltas(call.arguments, chunkChars).length;
  if (plan.text) count += splitIntoDeltas(plan.text, chunkChars).length;
  return count;
}
