// The ingestion thread: everything a tenant's file goes through before its
// chunks are written (format detection, PDF/DOCX/HTML/text extraction,
// tokenizing, chunking) runs here, never on the gateway's event loop; on
// SQLite the chunks then go straight to the pool's writer thread
// (chunk-writer-thread.mjs), not through the event loop either. It is
// plain JavaScript run by a bare Node worker thread (no TypeScript loader),
// so the parsers and the tokenizer it imports load in this thread only.
// The main thread's side is extraction-pool.ts; the message shapes are in
// ingestion-contract.ts.
import { getPriority, setPriority } from 'node:os';
import { extname } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { decode, encode } from 'gpt-tokenizer';
import { Parser } from 'htmlparser2';
import { boundPdfInflation, boundZipInflation } from './inflation-bound.mjs';
import { termCountsLine } from './text-terms.mjs';

/**
 * Ingestion is background work: on Linux a thread's nice value is its own,
 * so this lowers the priority of this thread alone and the gateway's event
 * loop keeps the CPU when both want it. A host that refuses (no permission
 * on another OS) just runs at normal priority; the thread reports what it got.
 */
function lowerPriority(niceness) {
  try {
    if (niceness) setPriority(niceness);
  } catch {
    // Refused: normal priority.
  }
  return getPriority();
}
const niceness = lowerPriority(workerData?.niceness ?? 0);

class InvalidFile extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** Extensions read as UTF-8 text: prose formats and source code (OpenAI's file_search list, roughly). */
const TEXT_EXTENSIONS = new Set(
  (
    '.txt .md .markdown .mdx .rst .csv .tsv .json .jsonl .yaml .yml .toml .ini .xml .log .tex ' +
    '.c .h .cc .cpp .hpp .cs .go .java .kt .kts .scala .js .mjs .cjs .jsx .ts .tsx .py .rb .php .pl .sh .bash .zsh ' +
    '.rs .swift .sql .lua .r .m .dart .ex .exs .erl .hs .clj .vue .svelte .css .scss .less .proto .graphql .dockerfile'
  ).split(' '),
);

/** Image formats by their first bytes: named in the refusal, since an image has a surface of its own (`input_image`). */
const IMAGE_MAGIC = [
  ['PNG', (b) => b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47],
  ['JPEG', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['GIF', (b) => b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38],
  ['WebP', (b) => b.byteLength >= 12 && Buffer.from(b.buffer, b.byteOffset + 8, 4).toString('latin1') === 'WEBP'],
];

/** A ZIP archive's first bytes (DOCX, XLSX and PPTX are ZIP archives). */
const isZip = (b) => b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04;

/**
 * The file's format, from its bytes first and its name only when the bytes
 * do not say: a DOCX named `.pdf` is read as the DOCX it is. Images and
 * archives that hold no document text are refused with what they are.
 */
function kindOf(filename, bytes) {
  const ext = extname(filename).toLowerCase();
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(16, bytes.byteLength));
  if (head.toString('latin1', 0, 5) === '%PDF-') return 'pdf';
  const image = IMAGE_MAGIC.find(([, test]) => head.byteLength >= 4 && test(head));
  if (image) {
    throw new InvalidFile(
      'unsupported_file',
      `${filename} is a ${image[0]} image, not a document with text. Images are shown to a model as an input_image content part; file search and input_file read documents (PDF, DOCX, HTML, Markdown, text and code).`,
    );
  }
  if (head.byteLength >= 4 && isZip(head)) {
    // The part names are stored in plain bytes in the archive's directory.
    if (Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes('word/document.xml')) return 'docx';
    throw new InvalidFile('unsupported_file', `${filename} is a ZIP archive other than a Word (DOCX) document; it has no text to read.`);
  }
  if (ext === '.pdf') return 'pdf';
  if (ext === '.docx') return 'docx';
  if (ext === '.html' || ext === '.htm' || ext === '.xhtml') return 'html';
  if (TEXT_EXTENSIONS.has(ext) || ext === '' || /^(readme|makefile|dockerfile|license)/i.test(filename)) return 'text';
  return undefined;
}

function decodeText(bytes, filename) {
  // NUL bytes mean binary content under a text name; refusing beats indexing noise.
  if (bytes.includes(0)) throw new InvalidFile('invalid_file', `${filename} is not text (it contains NUL bytes).`);
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes).replace(/^\uFEFF/, '');
}

/** pdf-parse marks page breaks as "-- 1 of 3 --"; they are not the document's words. */
const cleanPdfText = (text) => text.replace(/\n*-- \d+ of \d+ --\n*/g, '\n\n').trim();

/**
 * Refuses HTML nested deeper than `maxDepth` elements, in one streaming pass
 * (htmlparser2's tokenizer, which also reports the closes HTML implies), so
 * the converter's recursive walk never sees a document that would exhaust
 * its stack or its time.
 */
function checkHtmlDepth(html, filename, maxDepth) {
  let depth = 0;
  const tooDeep = new InvalidFile('invalid_file', `${filename} nests HTML elements more than ${maxDepth} deep.`);
  const parser = new Parser(
    {
      onopentag() {
        if (++depth > maxDepth) throw tooDeep;
      },
      onclosetag() {
        depth--;
      },
    },
    { decodeEntities: false },
  );
  parser.write(html);
  parser.end();
}

/** The inflation bound's refusal as the file's `invalid_file`. */
function bounded(check) {
  try {
    check();
  } catch (e) {
    throw new InvalidFile('invalid_file', e?.message ?? String(e));
  }
}

async function extract(filename, bytes, limits) {
  const kind = kindOf(filename, bytes);
  if (!kind)
    throw new InvalidFile(
      'unsupported_file',
      `Files of type ${extname(filename) || '(none)'} cannot be read as text (file search and input_file read PDF, DOCX, HTML, Markdown, text and code).`,
    );
  switch (kind) {
    case 'pdf': {
      bounded(() => boundPdfInflation(bytes, filename, limits.maxInflatedBytes));
      // Before pdf.js loads: it would otherwise load Skia, which then stays in the process (see the module).
      await import('./without-canvas.mjs');
      const { PDFParse } = await import('pdf-parse');
      const pdf = new PDFParse({ data: bytes });
      try {
        return cleanPdfText((await pdf.getText()).text);
      } catch (e) {
        throw new InvalidFile('invalid_file', `${filename} could not be read as a PDF: ${e?.message ?? e}`);
      } finally {
        await pdf.destroy().catch(() => undefined);
      }
    }
    case 'docx': {
      bounded(() => boundZipInflation(bytes, filename, limits.maxInflatedBytes));
      const mammoth = (await import('mammoth')).default;
      try {
        return (await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })).value.trim();
      } catch (e) {
        throw new InvalidFile('invalid_file', `${filename} could not be read as a DOCX document: ${e?.message ?? e}`);
      }
    }
    case 'html': {
      const html = decodeText(bytes, filename);
      checkHtmlDepth(html, filename, limits.maxHtmlDepth);
      const { convert } = await import('html-to-text');
      return convert(html, { wordwrap: false, selectors: [{ selector: 'img', format: 'skip' }] }).trim();
    }
    case 'text':
      return decodeText(bytes, filename);
  }
}

const isSpace = (c) =>
  c === 32 ||
  (c >= 9 && c <= 13) ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000 ||
  c === 0xfeff;

/**
 * The text cut so that no run of spaces or of non-spaces is longer than
 * `maxRun` characters. The tokenizer's byte-pair merge is quadratic in the
 * length of one pre-token, and a pre-token is at most one such run (a word,
 * a stretch of punctuation, a stretch of whitespace, a CJK sentence): with
 * the runs bounded, tokenizing is linear in the text. Ordinary prose is one
 * segment, so its tokens are exactly the whole text's.
 */
export function boundedRuns(text, maxRun) {
  const segments = [];
  let start = 0;
  let runStart = 0;
  let runIsSpace = undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = isSpace(c);
    if (space !== runIsSpace) {
      runIsSpace = space;
      runStart = i;
    } else if (i - runStart >= maxRun && !(c >= 0xdc00 && c <= 0xdfff)) {
      // Never between the halves of a surrogate pair.
      segments.push(text.slice(start, i));
      start = runStart = i;
    }
  }
  if (start < text.length) segments.push(text.slice(start));
  return segments;
}

/** o200k tokens of the text, linear in its length, refusing more than `maxTokens`. */
function tokenize(text, filename, limits) {
  const tokens = [];
  for (const segment of boundedRuns(text, limits.maxRunChars)) {
    for (const t of encode(segment)) tokens.push(t);
    if (tokens.length > limits.maxTokens) throw new InvalidFile('invalid_file', `${filename} has more than ${limits.maxTokens} tokens, the most one file may have.`);
  }
  return tokens;
}

/**
 * Token windows of `maxChunkSizeTokens`, each starting `max - overlap`
 * tokens after the previous one (o200k tokens, the encoding of OpenAI's
 * current models; counts are close enough for other tokenizers' budgets).
 */
export function chunkTokens(tokens, chunking) {
  if (tokens.length === 0) return [];
  const step = Math.max(1, chunking.maxChunkSizeTokens - chunking.chunkOverlapTokens);
  const chunks = [];
  for (let start = 0; start < tokens.length; start += step) {
    const piece = decode(tokens.slice(start, start + chunking.maxChunkSizeTokens)).trim();
    if (piece) chunks.push(piece);
    if (start + chunking.maxChunkSizeTokens >= tokens.length) break;
  }
  return chunks;
}

export async function prepare(filename, bytes, chunking, limits) {
  const text = await extract(filename, bytes, limits);
  return chunkTokens(tokenize(text, filename, limits), chunking);
}

// Loaded (the tokenizer's tables included): from here on a job's deadline runs.
parentPort?.postMessage({ ready: true, niceness });

/**
 * The chunks' index entries as one string, a line per chunk: its length in
 * terms, then each distinct term and its count, space-separated (terms are
 * letters and digits only). One string crosses threads as one copy.
 */
function indexLines(chunks) {
  return chunks.map(termCountsLine).join('\n');
}

/** The pool's chunk writer (`chunk-writer-thread.mjs`), reached through a port of this thread's own; none when jobs are written on the main thread. */
const writer = workerData?.writer;
let writes = 0;
const pendingWrites = new Map();
writer?.on('message', ({ id, completed, failure }) => {
  const settle = pendingWrites.get(id);
  pendingWrites.delete(id);
  settle?.({ completed, failure });
});
// The writer ended (it crashed; the pool starts another and retires this thread): nothing in flight will be answered.
writer?.on('close', () => {
  for (const settle of pendingWrites.values()) settle({ failure: 'the chunk writer thread ended' });
  pendingWrites.clear();
});

/** Has the writer complete the job with these chunks: `{ completed }`, or `{ failure }` when the database refused. */
function writeCompletion(write, prepared) {
  const id = ++writes;
  return new Promise((resolve) => {
    pendingWrites.set(id, resolve);
    writer.postMessage({ id, write, ...prepared }, [prepared.ends.buffer]);
  });
}

/** The chunks as one string, its cut points and their index lines: what crosses to another thread. */
function packed(chunks) {
  const ends = new Uint32Array(chunks.length);
  let at = 0;
  chunks.forEach((c, i) => (ends[i] = at += c.length));
  return { text: chunks.join(''), ends, terms: indexLines(chunks) };
}

/**
 * One request at a time: `{id, filename, bytes, chunking, limits, write?}` in.
 * Without `write`: `{id, text, ends, terms}` or `{id, error}` out. With
 * `write` (`{file, storeId, fileId, worker}`): `{id, writing}` once the file
 * is prepared (its deadline ends there) and handed to the writer, then `{id,
 * written: {completed, chunks}}`, or `{id, error}` for the file, or `{id,
 * failure}` when the database refused the write.
 */
parentPort?.on('message', async ({ id, filename, bytes, chunking, limits, write }) => {
  let prepared;
  try {
    const chunks = await prepare(filename, bytes, chunking, limits);
    if (write && chunks.length === 0) throw new InvalidFile('invalid_file', `${filename} contains no text to index.`);
    // Index entries within the file's deadline, like the rest of preparing it.
    prepared = packed(chunks);
  } catch (e) {
    const code = e instanceof InvalidFile ? e.code : 'invalid_file';
    const message = e instanceof InvalidFile ? e.message : `${filename} could not be read: ${e?.message ?? e}`;
    return parentPort.postMessage({ id, error: { code, message } });
  }
  if (!write) return parentPort.postMessage({ id, ...prepared }, [prepared.ends.buffer]);
  parentPort.postMessage({ id, writing: true });
  const chunks = prepared.ends.length;
  const { completed, failure } = await writeCompletion(write, prepared);
  parentPort.postMessage(failure === undefined ? { id, written: { completed, chunks } } : { id, failure });
});
