// Bounds what a document's compressed streams inflate to before a parser
// sees them. A parser inflates a stream whole and then works through it, so
// a 400 KB PDF whose page stream inflates to 200 MB holds an extraction
// thread for as long as that takes; inflating here with a byte cap
// (zlib's maxOutputLength) refuses it in the time the cap takes instead.
// Loaded by the ingestion thread (ingest-thread.mjs); plain JavaScript.
import { constants, inflateRawSync, inflateSync } from 'node:zlib';

export class InflationExceeded extends Error {
  constructor(filename, cap) {
    super(`${filename} inflates past ${cap} bytes (fileSearch.ingestion.maxInflatedBytes); compressed data this large is refused before it is parsed.`);
    this.code = 'invalid_file';
  }
}

/**
 * Inflates `data` with at most `budget.left` bytes out, and takes what it
 * produced from the budget. A stream that is not valid zlib data (another
 * filter first, damage) is left to the parser, which refuses or skips it as
 * it would have; only going past the budget is fatal. Truncated streams are
 * inflated as far as they go, as PDF readers do.
 */
function spend(data, raw, budget, filename) {
  let out;
  try {
    out = (raw ? inflateRawSync : inflateSync)(data, { maxOutputLength: budget.left + 1, finishFlush: constants.Z_SYNC_FLUSH });
  } catch (e) {
    if (e?.code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) throw new InflationExceeded(filename, budget.cap);
    return;
  }
  budget.left -= out.byteLength;
  if (budget.left < 0) throw new InflationExceeded(filename, budget.cap);
}

/** The keyword `stream` that opens a stream's data: after a dictionary's `>>`, not the end of `endstream`. */
const STREAM_KEYWORD = /(?<!end)stream(?:\r\n|\n|\r)/g;

/**
 * Every FlateDecode stream of the PDF, inflated against one budget.
 * Image XObjects are skipped: text extraction never decodes them. The
 * dictionary before each `stream` keyword says the filter and, when direct,
 * the length; otherwise the data runs to the next `endstream`.
 */
export function boundPdfInflation(bytes, filename, cap) {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const budget = { left: cap, cap };
  for (const match of text.matchAll(STREAM_KEYWORD)) {
    const at = match.index;
    const head = text.slice(Math.max(0, at - 4096), at);
    if (!/>>\s*$/.test(head)) continue;
    const dict = head.slice(Math.max(head.lastIndexOf('obj'), head.lastIndexOf('<<', head.lastIndexOf('/Filter'))));
    if (!/\/(FlateDecode|Fl)\b/.test(dict) || /\/Subtype\s*\/Image\b/.test(dict)) continue;
    const start = at + match[0].length;
    const direct = /\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(dict);
    let end = direct ? start + Number(direct[1]) : -1;
    if (end < start || end > text.length) end = text.indexOf('endstream', start);
    if (end < 0) end = text.length;
    spend(bytes.subarray(start, end), false, budget, filename);
  }
}

/**
 * Every deflated entry of a ZIP container (DOCX), inflated against one
 * budget, read from the central directory. Entries the directory cannot
 * place (ZIP64, damage) are left to the parser.
 */
export function boundZipInflation(bytes, filename, cap) {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 65_535); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return;
  const entries = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const budget = { left: cap, cap };
  for (let n = 0; n < entries && at + 46 <= buf.length && buf.readUInt32LE(at) === 0x02014b50; n++) {
    const method = buf.readUInt16LE(at + 10);
    const compressed = buf.readUInt32LE(at + 20);
    const local = buf.readUInt32LE(at + 42);
    const next = at + 46 + buf.readUInt16LE(at + 28) + buf.readUInt16LE(at + 30) + buf.readUInt16LE(at + 32);
    at = next;
    if (local + 30 > buf.length || buf.readUInt32LE(local) !== 0x04034b50) continue;
    const data = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    if (compressed === 0xffffffff || data + compressed > buf.length) continue;
    if (method === 8) spend(buf.subarray(data, data + compressed), true, budget, filename);
    else if (method === 0 && (budget.left -= compressed) < 0) throw new InflationExceeded(filename, cap);
  }
}
