import { type ValidationError, getMetadataStorage } from 'class-validator';

/**
 * One message per wrong value, for config sections and request bodies alike.
 * class-validator reports every failed rule of a property separately, so
 * `port: "http"` fails `@IsInt`, `@Min(0)` and `@Max(65535)` and gives three
 * lines that contradict each other ("must not be greater than 65535"). Here a
 * property's rules are read back from the class's metadata and phrased once,
 * as what was expected: "must be an integer from 0 to 65535".
 */

interface Rule {
  name: string;
  constraints: unknown[];
  custom?: string;
  /** The rule applies to each entry of a list (`{ each: true }`). */
  each: boolean;
}

/** The rules declared on one property of a class, in declaration order. */
function rulesOf(target: Function, property: string): Rule[] {
  return getMetadataStorage()
    .getTargetValidationMetadatas(target, '', true, false)
    .filter((m) => m.propertyName === property && m.name !== undefined)
    .map((m) => ({ name: m.name!, constraints: m.constraints ?? [], custom: typeof m.message === 'string' ? m.message : undefined, each: m.each === true }))
    .reverse();
}

const KINDS: Record<string, [one: string, many: string]> = {
  isInt: ['an integer', 'integers'],
  isNumber: ['a number', 'numbers'],
  isString: ['a string', 'strings'],
  isBoolean: ['true or false', 'booleans'],
  isArray: ['a list', 'lists'],
  isObject: ['an object', 'objects'],
  isNotEmpty: ['a non-empty value', 'non-empty values'],
};

/** Rules that only qualify a kind (a bound, a length), or say nothing of the value. */
const QUALIFIERS = new Set(['min', 'max', 'minLength', 'isOptional', 'nestedValidation', 'customValidation']);

function bounds(rules: readonly Rule[]): string {
  const min = rules.find((r) => r.name === 'min')?.constraints[0];
  const max = rules.find((r) => r.name === 'max')?.constraints[0];
  if (min !== undefined && max !== undefined) return ` from ${String(min)} to ${String(max)}`;
  if (min !== undefined) return ` of at least ${String(min)}`;
  if (max !== undefined) return ` of at most ${String(max)}`;
  return '';
}

function urlKind(rule: Rule): [string, string] {
  const protocols = (rule.constraints[0] as { protocols?: string[] } | undefined)?.protocols;
  const scheme = protocols?.length ? ` starting ${protocols.map((p) => `${p}://`).join(' or ')}` : '';
  return [`a URL${scheme}`, `URLs${scheme}`];
}

/** The phrase of a set of rules of one value (or of each entry, `many`); undefined when one has no phrase here. */
function phrase(rules: readonly Rule[], many: boolean): string | undefined {
  const isIn = rules.find((r) => r.name === 'isIn');
  if (isIn) {
    const values = (isIn.constraints[0] as unknown[]).map((v) => JSON.stringify(v));
    const choice = values.length === 2 ? `${values[0]} or ${values[1]}` : `one of ${values.join(', ')}`;
    return many ? `values that are each ${choice}` : choice;
  }
  const url = rules.find((r) => r.name === 'isUrl');
  const kinds = url ? urlKind(url) : rules.map((r) => KINDS[r.name]).find(Boolean);
  if (!kinds) return undefined;
  if (rules.some((r) => !QUALIFIERS.has(r.name) && !KINDS[r.name] && r !== url)) return undefined;
  const minLength = rules.find((r) => r.name === 'minLength')?.constraints[0];
  if (minLength === 1) return many ? `non-empty ${kinds[1]}` : `a non-empty ${kinds[0].replace(/^an? /, '')}`;
  const length = minLength === undefined ? '' : ` of at least ${String(minLength)} characters`;
  return `${kinds[many ? 1 : 0]}${bounds(rules)}${length}`;
}

/**
 * What the property's rules expect, as one phrase after "must be"; undefined
 * when a rule has no phrase here (its own message is used then).
 */
export function expectedOf(rules: readonly Rule[]): string | undefined {
  const each = rules.filter((r) => r.each);
  if (each.length === 0) return phrase(rules, false);
  const entries = phrase(each, true);
  return entries && `a list of ${entries}`;
}

/** The `(got …)` part: the value as it came; never for a credential. */
export function gotPart(value: unknown, secret = false): string {
  if (secret) return '';
  if (value === undefined) return ' (got nothing)';
  const text = JSON.stringify(value);
  return ` (got ${text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 77)}...` : text})`;
}

/**
 * One message for a property that failed: the custom message of the failed
 * rule if it has one, else the phrase of what every rule expects, else the
 * first failure's own words.
 */
export function violationMessage(error: ValidationError): string {
  const failed = Object.keys(error.constraints ?? {});
  const target = error.target?.constructor;
  const rules = target ? rulesOf(target, error.property) : [];
  const custom = rules.find((r) => failed.includes(r.name) && r.custom)?.custom;
  if (custom) return custom;
  const expected = expectedOf(rules);
  if (expected) return `must be ${expected}`;
  const first = Object.values(error.constraints ?? {})[0] ?? 'is not valid';
  // class-validator's own words start with the property name: "port must be ...".
  return first.startsWith(`${error.property} `) ? first.slice(error.property.length + 1) : first;
}

/** Each failed property, depth first, with its dotted path and its one message. */
export function violations(errors: readonly ValidationError[], prefix = ''): { path: string; message: string; value: unknown }[] {
  return errors.flatMap((e) => {
    // A list's entries are its children named by index: `servers[0]`, not `servers.0`.
    const path = /^\d+$/.test(e.property) && prefix ? `${prefix}[${e.property}]` : prefix ? `${prefix}.${e.property}` : e.property;
    const here = e.constraints && Object.keys(e.constraints).length > 0 ? [{ path, message: violationMessage(e), value: e.value }] : [];
    return [...here, ...violations(e.children ?? [], path)];
  });
}

/**
 * Settings whose value never appears in a message (keys, secrets, passwords):
 * a property named like a credential.
 */
export const SECRET_SETTING = /(key|keys|secret|password|token|(redis|postgres|nats|database)url)$/i;
