import { randomBytes } from 'node:crypto';

/**
 * Ids are a type prefix plus random hex, as OpenAI's are. Random bytes are
 * drawn in batches because one `randomBytes` call per id shows up in profiles
 * of long streams.
 */
let pool = Buffer.alloc(0);
let offset = 0;

export function newId(prefix: string, bytes = 12): string {
  if (offset + bytes > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return `${prefix}_${hex}`;
}
