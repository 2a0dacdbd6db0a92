import { extname } from 'node:path';
import { convert as htmlToText } from 'html-to-text';
import mammoth from 'mammoth';
import { PDFParse } from 'pdf-parse';

/** Why a file yields no text; the codes are OpenAI's `last_error.code` values. */
export class ExtractionError extends Error {
  constructor(
    readonly code: 'unsupported_file' | 'invalid_file',
    message: string,
  ) {
    super(message);
    this.name = 'ExtractionError';
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

type Kind = 'pdf' | 'docx' | 'html' | 'text';

function kindOf(filename: string, bytes: Buffer): Kind | undefined {
  const ext = extname(filename).toLowerCase();
  // Magic numbers first: a PDF or DOCX is what its bytes say, whatever its name.
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (ext === '.pdf') return 'pdf';
  if (ext === '.docx') return 'docx';
  if (ext === '.html' || ext === '.htm' || ext === '.xhtml') return 'html';
  if (TEXT_EXTENSIONS.has(ext) || ext === '' || /^(readme|makefile|dockerfile|license)/i.test(filename)) return 'text';
  return undefined;
}

function decodeText(bytes: Buffer, filename: string): string {
  // NUL bytes mean binary content under a text name; refusing beats indexing noise.
  if (bytes.includes(0)) throw new ExtractionError('invalid_file', `${filename} is not text (it contains NUL bytes).`);
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes).replace(/^\uFEFF/, '');
}

/** Parses a PDF or DOCX somewhere else (a worker thread) and returns its raw text. */
export type BinaryParser = (kind: 'pdf' | 'docx', bytes: Buffer, filename: string) => Promise<string>;

/** pdf-parse marks page breaks as "-- 1 of 3 --"; they are not the document's words. */
const cleanPdfText = (text: string): string => text.replace(/\n*-- \d+ of \d+ --\n*/g, '\n\n').trim();

/**
 * Plain text of an uploaded file: PDF (pdf.js through pdf-parse), DOCX
 * (mammoth), HTML (html-to-text), Markdown, plain text and source code.
 * With `parser`, PDF and DOCX are parsed by it (off the event loop);
 * without, here.
 */
export async function extractText(filename: string, bytes: Buffer, parser?: BinaryParser): Promise<string> {
  const kind = kindOf(filename, bytes);
  if (!kind) throw new ExtractionError('unsupported_file', `Files of type ${extname(filename) || '(none)'} are not supported for file search.`);
  if (parser && (kind === 'pdf' || kind === 'docx')) {
    const text = await parser(kind, bytes, filename);
    return kind === 'pdf' ? cleanPdfText(text) : text.trim();
  }
  switch (kind) {
    case 'pdf': {
      const pdf = new PDFParse({ data: new Uint8Array(bytes) });
      try {
        return cleanPdfText((await pdf.getText()).text);
      } catch (e) {
        throw new ExtractionError('invalid_file', `${filename} could not be read as a PDF: ${(e as Error).message}`);
      } finally {
        await pdf.destroy().catch(() => undefined);
      }
    }
    case 'docx':
      try {
        return (await mammoth.extractRawText({ buffer: bytes })).value.trim();
      } catch (e) {
        throw new ExtractionError('invalid_file', `${filename} could not be read as a DOCX document: ${(e as Error).message}`);
      }
    case 'html':
      return htmlToText(decodeText(bytes, filename), { wordwrap: false, selectors: [{ selector: 'img', format: 'skip' }] }).trim();
    case 'text':
      return decodeText(bytes, filename);
  }
}
