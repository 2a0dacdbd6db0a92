/**
 * The JSON text of values that never change (deeply frozen, shared between
 * requests: a kept tool list's declarations and functions), so that the
 * writers of bodies that carry them (the answer, the SSE events, the upstream
 * request) splice the text in instead of serializing the same values again
 * on every request. Keyed by the value itself, so the text lives as long as
 * the value does.
 */
const texts = new WeakMap<object, string>();

/**
 * Keeps `text` as the serialization of `value`, which must be deeply frozen
 * (the text would go stale otherwise); a value that is not frozen is ignored.
 */
export function rememberJson(value: object, text: string = JSON.stringify(value)): void {
  if (Object.isFrozen(value)) texts.set(value, text);
}

/** What `JSON.stringify(value)` gives, with the remembered texts of values at most `depth` objects down spliced in. */
export function stringifyJson(value: unknown, depth = 2): string {
  return carriesRemembered(value, depth) ? spliced(value as Record<string, unknown>, depth) : JSON.stringify(value);
}

/** True when a plain object, or one of its object-valued members down to `depth`, has a remembered text. */
function carriesRemembered(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || depth <= 0) return false;
  for (const key in value) {
    const member = (value as Record<string, unknown>)[key];
    if (member === null || typeof member !== 'object') continue;
    if (texts.has(member) || carriesRemembered(member, depth - 1)) return true;
  }
  return false;
}

/**
 * `JSON.stringify` of a plain object written member by member: what it would
 * give, since it too writes own enumerable string keys in order and leaves
 * out members it cannot represent (undefined, functions, symbols).
 */
function spliced(value: Record<string, unknown>, depth: number): string {
  if (typeof value.toJSON === 'function') return JSON.stringify(value);
  let out = '{';
  for (const key of Object.keys(value)) {
    const member = value[key];
    const text =
      member !== null && typeof member === 'object'
        ? (texts.get(member) ?? (carriesRemembered(member, depth - 1) ? spliced(member as Record<string, unknown>, depth - 1) : undefined))
        : undefined;
    const json = text ?? JSON.stringify(member);
    if (json === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${json}`;
  }
  return `${out}}`;
}

/** Freezes JSON-like data all the way down (declarations, schemas, functions) and gives it back. */
export function freezeJson<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    // Frozen already: frozen by this function, whose children are then frozen too.
    if (v === null || typeof v !== 'object' || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const child of Object.values(v)) stack.push(child);
  }
  return value;
}

/**
 * `list.map(map)`, made once per frozen list and kept frozen with its text:
 * a kept tool list is the same array on every request that declares it, and
 * its wire form is the same too. A list that is not frozen is mapped afresh.
 * `forms` is the caller's own (one per wire form).
 */
export function mapFrozenOnce<T, R>(forms: WeakMap<readonly T[], readonly R[]>, list: readonly T[], map: (item: T) => R): readonly R[] {
  if (!Object.isFrozen(list)) return list.map(map);
  let mapped = forms.get(list);
  if (!mapped) {
    mapped = freezeJson(list.map(map));
    rememberJson(mapped);
    forms.set(list, mapped);
  }
  return mapped;
}
