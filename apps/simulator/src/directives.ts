/**
 * `[[...]]` directives let a test, the demo or a benchmark script what the simulated model does,
 * straight from the prompt, without any side channel to the simulator. The syntax is documented in
 * README.md next to this file.
 */

export interface CallDirective {
  readonly name: string;
  /** Already validated JSON; serialised later in vLLM's spacing. */
  readonly args: Record<string, unknown>;
  /** Round in which the call is due; `'always'` means every round. */
  readonly round: number | 'always';
}

export interface FaultSpec {
  status?: number;
  message?: string;
  /** Seconds, sent as `retry-after`. */
  retryAfter?: number;
  /** Milliseconds to wait before sending anything at all. */
  stall?: number;
  stallAfter?: { events: number; ms: number };
  resetAfter?: number;
  malformedAfter?: number;
  truncate?: boolean;
  /** Apply to the first N requests carrying this fault only (so a client retry can succeed). */
  times?: number;
}

export interface DelaySpec {
  ttftMs?: number;
  tokenDelayMs?: number;
}

export interface Directives {
  readonly calls: CallDirective[];
  say?: string;
  reason?: string;
  tokens?: number;
  delay?: DelaySpec;
  fault?: FaultSpec;
  /** Verbatim text of the fault directive(s), the key for `times` bookkeeping. */
  faultKey?: string;
  /** The prompt with every recognised directive removed. */
  cleanText: string;
}

export class DirectiveError extends Error {
  override readonly name = 'DirectiveError';
}

const KEYWORD = /^(call(?:@\d+)?|always|say|reason|tokens|delay|fault)(?=[\s\]])/;

export function parseDirectives(text: string): Directives {
  const result: Directives = { calls: [], cleanText: '' };
  const faultTexts: string[] = [];
  let clean = '';
  let pos = 0;
  while (pos < text.length) {
    const open = text.indexOf('[[', pos);
    if (open < 0) break;
    const keyword = KEYWORD.exec(text.slice(open + 2, open + 2 + 24));
    if (!keyword) {
      // Not ours (a wiki link, a nested list literal): keep it as prompt text.
      clean += text.slice(pos, open + 2);
      pos = open + 2;
      continue;
    }
    clean += text.slice(pos, open);
    const bodyStart = open + 2 + keyword[1].length;
    const end = applyDirective(keyword[1], text, bodyStart, result, faultTexts);
    pos = end;
  }
  clean += text.slice(pos);
  result.cleanText = clean.replace(/\s+/g, ' ').trim();
  if (faultTexts.length > 0) result.faultKey = faultTexts.join(' ');
  return result;
}

/** Parses one directive body starting at `start` (just after the keyword); returns the index after `]]`. */
function applyDirective(keyword: string, text: string, start: number, into: Directives, faultTexts: string[]): number {
  if (keyword.startsWith('call') || keyword === 'always') {
    return parseCall(keyword, text, start, into);
  }
  if (keyword === 'say' || keyword === 'reason') {
    const { value, end } = readFreeText(text, start, keyword);
    into[keyword] = value;
    return end;
  }
  const close = text.indexOf(']]', start);
  if (close < 0) throw new DirectiveError(`[[${keyword} ...]] is not closed with ]]`);
  const body = text.slice(start, close).trim();
  if (keyword === 'tokens') {
    into.tokens = wholeNumber(body, 'tokens');
  } else if (keyword === 'delay') {
    into.delay = { ...into.delay, ...parseDelay(parsePairs(body, keyword)) };
  } else {
    into.fault = { ...into.fault, ...parseFault(parsePairs(body, keyword)) };
    faultTexts.push(body);
  }
  return close + 2;
}

function parseCall(keyword: string, text: string, start: number, into: Directives): number {
  const round: number | 'always' = keyword === 'always' ? 'always' : keyword.includes('@') ? Number(keyword.slice(5)) : 1;
  if (round !== 'always' && round < 1) throw new DirectiveError(`[[${keyword}]]: rounds start at 1`);
  let i = skipSpaces(text, start);
  const nameMatch = /^[^\s[\]{}]+/.exec(text.slice(i, i + 256));
  if (!nameMatch) throw new DirectiveError(`[[${keyword} NAME {json}]] needs a tool name`);
  const name = nameMatch[0];
  i = skipSpaces(text, i + name.length);
  let args: Record<string, unknown> = {};
  if (text[i] === '{') {
    const jsonEnd = balancedObjectEnd(text, i);
    if (jsonEnd < 0) throw new DirectiveError(`[[${keyword} ${name}]]: the JSON arguments have unbalanced braces`);
    const raw = text.slice(i, jsonEnd);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      throw new DirectiveError(`[[${keyword} ${name}]]: arguments are not valid JSON (${(error as Error).message})`);
    }
    args = parsed as Record<string, unknown>;
    i = skipSpaces(text, jsonEnd);
  }
  if (!text.startsWith(']]', i)) {
    throw new DirectiveError(`[[${keyword} ${name}]]: expected a JSON object and then ]]`);
  }
  into.calls.push({ name, args, round });
  return i + 2;
}

/** Free text runs to the first `]]`; a JSON string literal lets the text itself contain `]]`. */
function readFreeText(text: string, start: number, keyword: string): { value: string; end: number } {
  const i = skipSpaces(text, start);
  if (text[i] === '"') {
    const literalEnd = stringLiteralEnd(text, i);
    if (literalEnd > 0 && text.startsWith(']]', skipSpaces(text, literalEnd))) {
      try {
        return { value: JSON.parse(text.slice(i, literalEnd)) as string, end: skipSpaces(text, literalEnd) + 2 };
      } catch {
        // Not a well-formed literal after all: fall back to plain text below.
      }
    }
  }
  const close = text.indexOf(']]', start);
  if (close < 0) throw new DirectiveError(`[[${keyword} ...]] is not closed with ]]`);
  return { value: text.slice(i, close).trimEnd(), end: close + 2 };
}

function parsePairs(body: string, keyword: string): Map<string, string | true> {
  const pairs = new Map<string, string | true>();
  const pattern = /\s*([a-z_]+)(?:=("(?:[^"\\]|\\.)*"|\S+))?/gy;
  let match: RegExpExecArray | null;
  let consumed = 0;
  while (consumed < body.length && (match = pattern.exec(body)) !== null) {
    const value = match[2];
    if (value === undefined) pairs.set(match[1], true);
    else if (value.startsWith('"')) pairs.set(match[1], JSON.parse(value) as string);
    else pairs.set(match[1], value);
    consumed = pattern.lastIndex;
  }
  if (body.slice(consumed).trim() !== '') {
    throw new DirectiveError(`[[${keyword} ${body}]]: cannot read "${body.slice(consumed).trim()}"`);
  }
  return pairs;
}

function parseDelay(pairs: Map<string, string | true>): DelaySpec {
  const delay: DelaySpec = {};
  for (const [key, value] of pairs) {
    if (key === 'ttft') delay.ttftMs = pairNumber(value, 'delay ttft');
    else if (key === 'token') delay.tokenDelayMs = pairNumber(value, 'delay token');
    else throw new DirectiveError(`[[delay]]: unknown setting "${key}" (use ttft=MS token=MS)`);
  }
  return delay;
}

/** Shared by the directive and by the `fault` option / SIM_FAULT, so both accept one syntax. */
export function parseFaultText(body: string): FaultSpec {
  return parseFault(parsePairs(body.trim(), 'fault'));
}

function parseFault(pairs: Map<string, string | true>): FaultSpec {
  const fault: FaultSpec = {};
  let pendingStallAfter: number | undefined;
  let stallMs: number | undefined;
  for (const [key, value] of pairs) {
    switch (key) {
      case 'status': {
        const status = pairNumber(value, 'fault status');
        if (status < 400 || status > 599) throw new DirectiveError('[[fault status=CODE]]: CODE must be 400-599');
        fault.status = status;
        break;
      }
      case 'message':
        if (value === true) throw new DirectiveError('[[fault message=...]] needs a value');
        fault.message = value;
        break;
      case 'retry_after':
        fault.retryAfter = pairNumber(value, 'fault retry_after');
        break;
      case 'stall':
        fault.stall = pairNumber(value, 'fault stall');
        break;
      case 'stall_after':
        pendingStallAfter = pairNumber(value, 'fault stall_after');
        break;
      case 'ms':
        stallMs = pairNumber(value, 'fault ms');
        break;
      case 'reset_after':
        fault.resetAfter = pairNumber(value, 'fault reset_after');
        break;
      case 'malformed_after':
        fault.malformedAfter = pairNumber(value, 'fault malformed_after');
        break;
      case 'truncate':
        if (value !== true) throw new DirectiveError('[[fault truncate]] takes no value');
        fault.truncate = true;
        break;
      case 'times':
        fault.times = pairNumber(value, 'fault times');
        break;
      default:
        throw new DirectiveError(`[[fault]]: unknown setting "${key}"`);
    }
  }
  if ((pendingStallAfter === undefined) !== (stallMs === undefined)) {
    throw new DirectiveError('[[fault stall_after=N ms=MS]] needs both N and MS');
  }
  if (pendingStallAfter !== undefined && stallMs !== undefined) {
    fault.stallAfter = { events: pendingStallAfter, ms: stallMs };
  }
  return fault;
}

function pairNumber(value: string | true, what: string): number {
  if (value === true) throw new DirectiveError(`[[${what}=N]] needs a number`);
  return wholeNumber(value, what);
}

function wholeNumber(raw: string, what: string): number {
  if (!/^\d+$/.test(raw)) throw new DirectiveError(`[[${what}]]: "${raw}" is not a whole number`);
  return Number(raw);
}

function skipSpaces(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i])) i++;
  return i;
}

/** Index just past the `}` closing the object opened at `start`, honouring strings; -1 if unbalanced. */
function balancedObjectEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      const end = stringLiteralEnd(text, i);
      if (end < 0) return -1;
      i = end - 1;
    } else if (ch === '{' || ch === '[') {
      depth++;
    } else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 0) return ch === '}' ? i + 1 : -1;
    }
  }
  return -1;
}

function stringLiteralEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return -1;
}
