import type { JsonSchema } from './conversation.js';

/**
 * Arguments a model might plausibly produce for a JSON schema: valid against it, and drawn from the
 * prompt where that is easy (quoted phrases, names, numbers), so demos read naturally. Deterministic.
 * Not supported: `pattern`, `not`, `if/then/else`, `dependentRequired` (values ignore them).
 */
export function fillSchema(schema: JsonSchema | undefined, prompt: string): unknown {
  const hints = promptHints(prompt);
  return fill(schema ?? { type: 'object' }, '', { root: schema ?? {}, hints, depth: 0 });
}

interface FillContext {
  root: JsonSchema;
  hints: PromptHints;
  depth: number;
}

interface PromptHints {
  text: string;
  quoted: string[];
  properNouns: string[];
  identifiers: string[];
  emails: string[];
  urls: string[];
  numbers: number[];
  longestWord: string | undefined;
}

// Past this depth a recursive schema gets the smallest valid value instead of recursing forever.
const MAX_DEPTH = 8;

const STOP_WORDS = new Set(
  `a an and are as at be by can could do does for from get give how i in is it me my of on or please show
  tell the this to us use using what when where which who why will with would you your`.split(/\s+/),
);

/** Property names whose value is best the user's own words, verbatim. */
const FREE_TEXT_NAME = /(query|question|prompt|text|message|content|body|search|expression|instruction|input|description|request|keywords?)$/i;
const IDENTIFIER_NAME = /(^|_|-)(id|key|ref|code|path|file|filename|name|slug|sku|ticker|symbol)$|Id$/;

function fill(schemaIn: unknown, propName: string, ctx: FillContext): unknown {
  const schema = resolve(schemaIn, ctx.root);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const firstVariant = (Array.isArray(schema.anyOf) && schema.anyOf[0]) || (Array.isArray(schema.oneOf) && schema.oneOf[0]);
  if (firstVariant) {
    const { anyOf: _a, oneOf: _o, ...rest } = schema;
    return fill({ ...rest, ...resolve(firstVariant, ctx.root) }, propName, ctx);
  }
  if (Array.isArray(schema.allOf)) return fill(mergeAllOf(schema, ctx.root), propName, ctx);
  if ('default' in schema && schema.default !== undefined && schema.default !== null) return schema.default;

  switch (typeOf(schema)) {
    case 'object':
      return fillObject(schema, ctx);
    case 'array':
      return fillArray(schema, propName, ctx);
    case 'integer':
      return fillNumber(schema, true, ctx);
    case 'number':
      return fillNumber(schema, false, ctx);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return fillString(schema, propName, ctx);
  }
}

function fillObject(schema: JsonSchema, ctx: FillContext): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : undefined;
  // Without a `required` list every declared property is fair game; strict-mode tools list them all anyway.
  const names = required ?? Object.keys(properties);
  const value: Record<string, unknown> = {};
  if (ctx.depth >= MAX_DEPTH) return value;
  const inner = { ...ctx, depth: ctx.depth + 1 };
  for (const name of names) {
    value[name] = fill(properties[name] ?? {}, name, inner);
  }
  return value;
}

function fillArray(schema: JsonSchema, propName: string, ctx: FillContext): unknown[] {
  const minItems = typeof schema.minItems === 'number' ? schema.minItems : 1;
  const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
  const count = ctx.depth >= MAX_DEPTH ? minItems : Math.min(Math.max(minItems, 1), maxItems);
  const inner = { ...ctx, depth: ctx.depth + 1 };
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
  const items: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const itemSchema = prefix[i] ?? schema.items ?? {};
    let item = fill(itemSchema, singular(propName), inner);
    if (schema.uniqueItems === true) item = makeDistinct(item, items, i);
    items.push(item);
  }
  return items;
}

function makeDistinct(item: unknown, previous: unknown[], index: number): unknown {
  const seen = (candidate: unknown) => previous.some((p) => JSON.stringify(p) === JSON.stringify(candidate));
  if (!seen(item)) return item;
  if (typeof item === 'string') return `${item}-${index + 1}`;
  if (typeof item === 'number') return item + index;
  return item;
}

function fillNumber(schema: JsonSchema, integer: boolean, ctx: FillContext): number {
  // An exclusive bound becomes an inclusive one a step inside it.
  const step = integer ? 1 : 0.5;
  const exclusiveMin = numeric(schema.exclusiveMinimum);
  const exclusiveMax = numeric(schema.exclusiveMaximum);
  const min = numeric(schema.minimum) ?? (exclusiveMin !== undefined ? exclusiveMin + step : undefined);
  const max = numeric(schema.maximum) ?? (exclusiveMax !== undefined ? exclusiveMax - step : undefined);
  const multipleOf = numeric(schema.multipleOf);
  const fits = (n: number) =>
    (!integer || Number.isInteger(n)) && (min === undefined || n >= min) && (max === undefined || n <= max) && (multipleOf === undefined || Number.isInteger(n / multipleOf));
  const fromPrompt = ctx.hints.numbers.find(fits);
  if (fromPrompt !== undefined) return fromPrompt;
  let value = min ?? (max !== undefined && max < 1 ? max : 1);
  if (integer) value = Math.ceil(value);
  if (multipleOf !== undefined) value = Math.ceil(value / multipleOf) * multipleOf;
  return value;
}

function fillString(schema: JsonSchema, propName: string, ctx: FillContext): string {
  let value = pickString(schema, propName, ctx.hints);
  const minLength = numeric(schema.minLength) ?? 0;
  const maxLength = numeric(schema.maxLength);
  if (value.length < minLength) value = value.padEnd(minLength, value === '' ? 'x' : ` ${value}`);
  if (maxLength !== undefined && value.length > maxLength) value = value.slice(0, maxLength);
  return value;
}

function pickString(schema: JsonSchema, propName: string, hints: PromptHints): string {
  switch (schema.format) {
    case 'email':
      return hints.emails[0] ?? 'user@example.com';
    case 'uri':
    case 'url':
      return hints.urls[0] ?? 'https://example.com';
    case 'date-time':
      return '2025-01-01T00:00:00Z';
    case 'date':
      return '2025-01-01';
    case 'time':
      return '00:00:00';
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000';
  }
  if (/e-?mail|recipient|^to$|^cc$|^bcc$/i.test(propName) && hints.emails[0]) return hints.emails[0];
  if (/url|link|href/i.test(propName) && hints.urls[0]) return hints.urls[0];
  if (FREE_TEXT_NAME.test(propName)) return hints.quoted[0] ?? (hints.text || 'example');
  if (IDENTIFIER_NAME.test(propName) && hints.identifiers[0]) return hints.identifiers[0];
  return hints.quoted[0] ?? hints.properNouns[0] ?? hints.identifiers[0] ?? hints.longestWord ?? 'example';
}

function promptHints(prompt: string): PromptHints {
  const text = prompt.replace(/\s+/g, ' ').trim();
  const quoted = [...text.matchAll(/"([^"]+)"|'([^']{2,})'/g)].map((m) => m[1] ?? m[2]);
  const emails = text.match(/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g) ?? [];
  const urls = text.match(/https?:\/\/[^\s"']+/g) ?? [];
  const words = text.split(/\s+/).map((w) => w.replace(/^[^\w@/.-]+|[^\w]+$/g, ''));
  // Things like job-382, v2.1, src/main.ts: tokens mixing letters with digits or path separators.
  const identifiers = words.filter((w) => (/\d/.test(w) && /[A-Za-z]/.test(w) && /^[\w./@:-]+$/.test(w)) || (/^[\w-]+[/.][\w./-]+$/.test(w) && !/^https?:/.test(w)));
  const numbers = [...text.matchAll(/(?<![\w.-])(-?\d+(?:\.\d+)?)(?![\w-]|\.\d)/g)].map((m) => Number(m[1]));
  // Runs of capitalised words that do not open a sentence: "San Francisco", "Paris".
  const properNouns: string[] = [];
  const sentences = text.split(/(?<=[.!?])\s+/);
  for (const sentence of sentences) {
    const tokens = sentence.split(' ');
    let run: string[] = [];
    const flush = () => {
      if (run.length > 0) properNouns.push(run.join(' '));
      run = [];
    };
    tokens.forEach((token, i) => {
      const word = token.replace(/[^\p{L}\p{N}'-]+$/u, '');
      const capitalised = /^\p{Lu}[\p{Ll}\p{N}'-]*$/u.test(word) && !STOP_WORDS.has(word.toLowerCase());
      if (capitalised && i > 0) run.push(word);
      else flush();
      if (word !== token) flush();
    });
    flush();
  }
  const contentWords = words.filter((w) => /^[\p{L}][\p{L}\p{N}'-]*$/u.test(w) && !STOP_WORDS.has(w.toLowerCase()));
  const longestWord = contentWords.reduce<string | undefined>((best, w) => (best === undefined || w.length > best.length ? w : best), undefined);
  return { text, quoted, properNouns, identifiers, emails, urls, numbers, longestWord };
}

function resolve(schema: unknown, root: JsonSchema, seen = 0): JsonSchema {
  if (typeof schema === 'boolean' || schema === null || typeof schema !== 'object') return {};
  const s = schema as JsonSchema;
  if (typeof s.$ref === 'string' && s.$ref.startsWith('#') && seen < 16) {
    const path = s.$ref
      .slice(1)
      .split('/')
      .filter(Boolean)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    let target: unknown = root;
    for (const segment of path) target = (target as Record<string, unknown> | undefined)?.[segment];
    const { $ref: _ref, ...rest } = s;
    return { ...resolve(target, root, seen + 1), ...rest };
  }
  return s;
}

function mergeAllOf(schema: JsonSchema, root: JsonSchema): JsonSchema {
  const { allOf, ...rest } = schema;
  const merged: JsonSchema = { ...rest };
  const properties: Record<string, unknown> = { ...((rest.properties as Record<string, unknown>) ?? {}) };
  const required = new Set<string>(Array.isArray(rest.required) ? (rest.required as string[]) : []);
  for (const part of allOf as unknown[]) {
    const resolved = resolve(part, root);
    Object.assign(merged, resolved);
    Object.assign(properties, (resolved.properties as Record<string, unknown>) ?? {});
    if (Array.isArray(resolved.required)) (resolved.required as string[]).forEach((r) => required.add(r));
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.size > 0) merged.required = [...required];
  delete merged.allOf;
  return merged;
}

function typeOf(schema: JsonSchema): string | undefined {
  const type = schema.type;
  if (Array.isArray(type)) return (type.find((t) => t !== 'null') as string | undefined) ?? 'null';
  if (typeof type === 'string') return type;
  if (schema.properties !== undefined || schema.required !== undefined) return 'object';
  if (schema.items !== undefined || schema.prefixItems !== undefined) return 'array';
  return undefined;
}

function numeric(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function singular(name: string): string {
  return name.endsWith('ies') ? `${name.slice(0, -3)}y` : name.endsWith('s') ? name.slice(0, -1) : name;
}
