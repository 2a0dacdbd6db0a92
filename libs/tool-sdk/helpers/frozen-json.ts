import { randomBytes } from 'node:crypto';
/**
 * The JSON text of values that never change (deeply frozen, shared between
 * requests: a kept tool list's declarations and functions), so that the
 * writers of bodies that carry them (the answer, the SSE events, the upstream
 * request) splice the text in instead of serializing the same values again
 * on every request. Keyed by the value itself, so the text lives as long as
 * the value does.
 *
 * A cache, not state a request leaves for a later layer: the text is what
 * `JSON.stringify` gives for a value that cannot change, so a writer that
 * misses it serializes the value and writes the same bytes; a request's own
 * (unfrozen) values are never in it. It is keyed by identity because the
 * writers meet the frozen values deep inside bodies they did not build.
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
  if (!carriesRemembered(value, depth)) return JSON.stringify(value);
  const pieces = splicedPieces(value as object, depth);
  let out = '';
  for (const piece of pieces) out += typeof piece === 'string' ? piece : texts.get(piece)!;
  return out;
}

/** UTF-8 bytes of the remembered texts, made when a body is first written as bytes: a cache beside `texts`, for the same values. */
const textBytes = new WeakMap<object, Buffer>();

/**
 * `stringifyJson(value)` as UTF-8 bytes, for a body written to a socket, in
 * the order they go out: one buffer, or, when the value carries remembered
 * texts, the encoded parts around them and each remembered text's kept bytes
 * as they are. A large kept value (a 100-tool list is 30 KB) is then neither
 * joined into a new string, encoded again, nor copied into a new buffer on
 * each request; a writer hands the chunks to the socket in one tick, which
 * sends them in one vectored write.
 */
export function jsonChunks(value: unknown, depth = 2): Buffer[] {
  if (!carriesRemembered(value, depth)) return [Buffer.from(JSON.stringify(value))];
  return splicedPieces(value as object, depth).map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : keptBytes(piece)));
}

/**
 * Writes `chunks` to an HTTP message (a server's answer, a client's request)
 * and ends it. All in one tick: Node corks the socket for the tick of a
 * message's first write, so they leave in one vectored write.
 */
export function endWithChunks(message: { write(chunk: Buffer): unknown; end(chunk?: Buffer): unknown }, chunks: readonly Buffer[]): void {
  for (let i = 0; i < chunks.length - 1; i++) message.write(chunks[i]);
  message.end(chunks.at(-1));
}

/** The total length of `chunks`. */
export function chunksLength(chunks: readonly Buffer[]): number {
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  return length;
}

function keptBytes(value: object): Buffer {
  let bytes = textBytes.get(value);
  if (!bytes) {
    bytes = Buffer.from(texts.get(value)!);
    textBytes.set(value, bytes);
  }
  return bytes;
}

/**
 * True when an object or array, or one of its object-valued members or
 * elements down to `depth`, has a remembered text. An array is a level like
 * an object: a kept list inside an answer's `output` item is two levels below
 * `output`'s owner.
 */
function carriesRemembered(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object' || depth <= 0) return false;
  if (Array.isArray(value)) {
    // An index loop: `for...in` over an array enumerates its indices as strings.
    for (let i = 0; i < value.length; i++) if (isOrCarriesRemembered(value[i], depth)) return true;
    return false;
  }
  for (const key in value) if (isOrCarriesRemembered((value as Record<string, unknown>)[key], depth)) return true;
  return false;
}

/** A member (of a value `depth` levels from its limit) that is remembered itself or carries a remembered value. */
function isOrCarriesRemembered(member: unknown, depth: number): boolean {
  if (member === null || typeof member !== 'object') return false;
  return texts.has(member) || carriesRemembered(member, depth - 1);
}

/**
 * What a remembered value is replaced with in the copy `splicedPieces` serializes: its JSON is
 * `PLACEHOLDER_JSON`, a string no request can be expected to hold (a control character and 128
 * random bits of this process), and a body that holds it anyway is written member by member.
 */
const PLACEHOLDER_TEXT = `\u0001switchyard-kept-${randomBytes(16).toString('hex')}`;
const PLACEHOLDER_JSON = JSON.stringify(PLACEHOLDER_TEXT);
const PLACEHOLDER = Object.freeze({ toJSON: () => PLACEHOLDER_TEXT });

/**
 * `JSON.stringify` of a plain object, as text with the remembered values
 * left as themselves (their texts are put in by the caller, as a string or
 * as bytes). One `JSON.stringify` of a shallow copy in which each remembered
 * value is a placeholder, cut at the placeholders: the copies keep every
 * key in its place, so the text around them is what `JSON.stringify` gives
 * for the value. Serializing member by member (the fallback) cost about as
 * much again as the whole body's `JSON.stringify`, in two calls per member.
 */
function splicedPieces(value: object, depth: number): Array<string | object> {
  const kept: object[] = [];
  const copy = withPlaceholders(value, depth, kept);
  if (copy !== undefined) {
    const parts = JSON.stringify(copy).split(PLACEHOLDER_JSON);
    // As many cuts as placeholders: the body held no text of its own that looks like one.
    if (parts.length === kept.length + 1) {
      const pieces: Array<string | object> = [parts[0]];
      for (let i = 0; i < kept.length; i++) pieces.push(kept[i], parts[i + 1]);
      return pieces;
    }
  }
  const pieces: Array<string | object> = [];
  const tail = splicedInto(value, depth, pieces, '');
  pieces.push(tail);
  return pieces;
}

/**
 * `value` with each remembered value down to `depth` replaced by `PLACEHOLDER` (collected in
 * `kept`, in the order `JSON.stringify` writes them), copying only the objects and arrays on the
 * way to one; undefined for a key the copy cannot hold as it is (`__proto__`). An object with its
 * own `toJSON` is serialized whole, as `JSON.stringify` does.
 */
function withPlaceholders<T extends object>(value: T, depth: number, kept: object[]): T | undefined {
  const members = value as Record<string, unknown>;
  if (typeof members.toJSON === 'function') return value;
  let copy: Record<string, unknown> | undefined;
  // An array's keys are its indices, in order, as `JSON.stringify` writes them.
  for (const key of Object.keys(value)) {
    const member = members[key];
    if (member === null || typeof member !== 'object') continue;
    let replaced: object | undefined;
    if (texts.has(member)) {
      kept.push(member);
      replaced = PLACEHOLDER;
    } else if (carriesRemembered(member, depth - 1)) {
      replaced = withPlaceholders(member, depth - 1, kept);
      if (replaced === undefined) return undefined;
    } else continue;
    // Assigning `__proto__` would set the copy's prototype rather than a member.
    if (key === '__proto__') return undefined;
    copy ??= (Array.isArray(value) ? value.slice() : { ...value }) as Record<string, unknown>;
    copy[key] = replaced;
  }
  return (copy as T | undefined) ?? value;
}

/** `splicedPieces` member by member: appends `value`'s pieces to `pieces`, `pending` being text not yet pushed; gives the text still pending after it. */
function splicedInto(value: object, depth: number, pieces: Array<string | object>, pending: string): string {
  const members = value as Record<string, unknown>;
  if (typeof members.toJSON === 'function') return pending + JSON.stringify(value);
  const array = Array.isArray(value);
  let out = pending + (array ? '[' : '{');
  let first = true;
  for (const key of array ? value.keys() : Object.keys(value)) {
    const member = members[key as string];
    const name = array ? '' : `${JSON.stringify(key)}:`;
    if (member !== null && typeof member === 'object') {
      if (texts.has(member)) {
        pieces.push(`${out}${first ? '' : ','}${name}`, member);
        out = '';
        first = false;
        continue;
      }
      if (carriesRemembered(member, depth - 1)) {
        out = splicedInto(member, depth - 1, pieces, `${out}${first ? '' : ','}${name}`);
        first = false;
        continue;
      }
    }
    let json = JSON.stringify(member);
    if (json === undefined) {
      // A member JSON cannot hold is left out of an object, and is `null` in an array.
      if (!array) continue;
      json = 'null';
    }
    out += `${first ? '' : ','}${name}${json}`;
    first = false;
  }
  return out + (array ? ']' : '}');
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
 * The wire forms a writer keeps (one pair per wire form): of each frozen
 * list, and of each frozen item of a list that is not frozen itself.
 */
export interface FrozenForms<T extends object, R> {
  readonly lists: WeakMap<readonly T[], readonly R[]>;
  readonly items: WeakMap<T, R>;
}

/** An empty `FrozenForms`, for a writer's module to keep. */
export function frozenForms<T extends object, R>(): FrozenForms<T, R> {
  return { lists: new WeakMap(), items: new WeakMap() };
}

/**
 * `list.map(map)`, made once per frozen list and kept frozen with its text:
 * a kept tool list is the same array on every request that declares it, and
 * its wire form is the same too. A list that is not frozen is mapped afresh,
 * except for its frozen items, each mapped once and kept with its text: a
 * request's own list can be made of items kept elsewhere (the functions of a
 * tool listing a handler keeps), and a writer then splices each one's text.
 */
export function mapFrozenOnce<T extends object, R>(forms: FrozenForms<T, R>, list: readonly T[], map: (item: T) => R): readonly R[] {
  if (!Object.isFrozen(list)) return list.map((item) => (Object.isFrozen(item) ? mapItemOnce(forms.items, item, map) : map(item)));
  let mapped = forms.lists.get(list);
  if (!mapped) {
    mapped = freezeJson(list.map(map));
    rememberJson(mapped);
    forms.lists.set(list, mapped);
  }
  return mapped;
}

/** `map(item)` of a frozen item, made once, frozen, and its text kept. */
function mapItemOnce<T extends object, R>(items: WeakMap<T, R>, item: T, map: (item: T) => R): R {
  let mapped = items.get(item);
  if (mapped === undefined) {
    mapped = freezeJson(map(item));
    if (mapped !== null && typeof mapped === 'object') rememberJson(mapped);
    items.set(item, mapped);
  }
  return mapped;
}
