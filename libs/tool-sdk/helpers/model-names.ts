import { createHash } from 'node:crypto';

/** OpenAI and most tool-call parsers accept `^[a-zA-Z0-9_-]{1,64}$` for function names. */
export const MAX_MODEL_NAME_LENGTH = 64;

function sanitize(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_');
  return cleaned.length > 0 ? cleaned : 'tool';
}

function shortHash(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 8);
}

/**
 * A stable model-visible name for `parts` (e.g. a group and its member, or
 * a server and its tool), at most 64 characters and not in `taken`.
 *
 * Stable means the same declaration gets the same name in every request, so a
 * conversation continued later still routes its calls. Names that are too
 * long, or collide, get a hash of the full identity appended.
 */
/** What naming needs to know about the names already taken. */
export type TakenNames = Pick<ReadonlySet<string>, 'has'>;

export function modelVisibleName(parts: string[], taken: TakenNames, separator = '__'): string {
  const identity = parts.join('\u0000');
  const joined = sanitize(parts.join(separator));
  if (joined.length <= MAX_MODEL_NAME_LENGTH && !taken.has(joined)) return joined;
  const suffix = `_${shortHash(identity)}`;
  const base = joined.slice(0, MAX_MODEL_NAME_LENGTH - suffix.length) + suffix;
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = joined.slice(0, MAX_MODEL_NAME_LENGTH - suffix.length - String(n).length - 1) + `${suffix}_${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
