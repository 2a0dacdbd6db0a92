import { makeDocx, makePdf } from '../../../../test/support/file-search/documents.js';
import { ExtractionError, extractText } from './text-extractor.js';

async function failure(name: string, bytes: Buffer): Promise<ExtractionError> {
  const e = await extractText(name, bytes).catch((err) => err);
  expect(e).toBeInstanceOf(ExtractionError);
  return e;
}

describe('extractText', () => {
  it('reads a PDF over several pages, without the page markers', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => `Line ${i} of the pump manual.`);
    const text = await extractText('manual.pdf', await makePdf(lines));
    expect(text).toContain('Line 0 of the pump manual.');
    expect(text).toContain('Line 59 of the pump manual.');
    expect(text).not.toMatch(/-- \d+ of \d+ --/);
  });

  it('recognises a PDF by its bytes whatever its name', async () => {
    expect(await extractText('upload', await makePdf(['Named oddly']))).toContain('Named oddly');
  });

  it('reads a DOCX', async () => {
    expect(await extractText('notes.docx', await makeDocx(['First paragraph.', 'Second paragraph.']))).toBe('First paragraph.\n\nSecond paragraph.');
  });

  it('reads HTML as text, without scripts, styles or markup', async () => {
    const text = await extractText('page.html', Buffer.from('<html><head><style>p{}</style></head><body><p>Hello <b>there</b></p><script>alert(1)</script></body></html>'));
    expect(text).toBe('Hello there');
  });

  it('reads Markdown, plain text and source code as they are', async () => {
    expect(await extractText('a.md', Buffer.from('\uFEFF# Title\n\nBody'))).toBe('# Title\n\nBody');
    expect(await extractText('main.rs', Buffer.from('fn main() {}'))).toBe('fn main() {}');
    expect(await extractText('Makefile', Buffer.from('all:\n\ttrue'))).toBe('all:\n\ttrue');
  });

  it('fails a broken PDF or DOCX as invalid_file, a binary under a text name too, an unknown type as unsupported_file', async () => {
    expect((await failure('x.pdf', Buffer.from('%PDF-1.4 garbage'))).code).toBe('invalid_file');
    expect((await failure('x.docx', Buffer.from('not a zip'))).code).toBe('invalid_file');
    expect((await failure('x.txt', Buffer.from([0x61, 0, 0x62]))).code).toBe('invalid_file');
    const unsupported = await failure('photo.jpeg', Buffer.from([0xff, 0xd8, 0xff]));
    expect(unsupported.code).toBe('unsupported_file');
    expect(unsupported.message).toContain('.jpeg');
  });
});
