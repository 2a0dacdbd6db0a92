import { randomBytes } from 'node:crypto';

/**
 * Ids are a type prefix, the time they were made (milliseconds since the
 * epoch, 12 hex digits) and random hex, as OpenAI's begin with their time.
 * Time first so that ids sort in the order they were made: the stores index
 * responses and items by id, and an id that lands at the right-hand end of
 * those indexes makes a group commit touch a few pages, where a random one
 * dirtied a page of its own in every index (2.5–3× the SQLite work per saved
 * response, growing with the store). The random part stays 96 bits, so an id
 * is as hard to guess as before. Random bytes are drawn in batches because
 * one `randomBytes` call per id shows up in profiles of long streams.
 */
let pool = Buffer.alloc(0);
let offset = 0;
/**
 * The time part of the last millisecond an id was made in: a request makes
 * several ids within one millisecond, and turning a time into hex digits
 * (`Number#toString(16)` on a double) was most of what an id cost.
 */
let lastTime = -1;
let lastTimeHex = '';

export function newId(prefix: string, bytes = 12): string {
  if (offset + bytes > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  const now = Date.now();
  if (now !== lastTime) {
    lastTime = now;
    lastTimeHex = now.toString(16).padStart(12, '0');
  }
  return `${prefix}_${lastTimeHex}${hex}`;
}
