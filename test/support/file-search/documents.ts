import { once } from 'node:events';
import { createDeflate, createDeflateRaw } from 'node:zlib';
import { Document, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** Real PDF and DOCX files, written in the test by the libraries people use to write them. */

export async function makePdf(lines: string[]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  let page = pdf.addPage();
  let y = 760;
  for (const line of lines) {
    if (y < 60) {
      page = pdf.addPage();
      y = 760;
    }
    page.drawText(line, { x: 50, y, font, size: 11 });
    y -= 16;
  }
  return Buffer.from(await pdf.save());
}

export async function makeDocx(paragraphs: string[]): Promise<Buffer> {
  const doc = new Document({ sections: [{ children: paragraphs.map((p) => new Paragraph(p)) }] });
  return Buffer.from(await Packer.toBuffer(doc));
}

/** A few short documents on distinct topics, so that the right one is unambiguous. */
export const TOPICS = {
  warranty: 'The Larkspur kettle carries a warranty of thirty-six months covering the heating element and the thermostat.',
  descaling: 'Descale the kettle monthly with citric acid; hard water leaves limescale on the heating plate.',
  shipping: 'Orders ship from the Rotterdam warehouse within two business days; express courier delivery costs extra.',
  returns: 'Unused items may be returned within thirty days for a full refund; opened cartridges are not refundable.',
  security: 'Accounts support passwordless sign-in with hardware keys; recovery codes are printed once at enrolment.',
};

/** Deflates `total` zero bytes a megabyte at a time (never holding them all), zlib-wrapped or raw. */
async function deflatedZeros(total: number, raw: boolean): Promise<Buffer> {
  const deflate = raw ? createDeflateRaw({ level: 9 }) : createDeflate({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on('data', (c: Buffer) => chunks.push(c));
  const ended = once(deflate, 'end');
  const zeros = Buffer.alloc(1 << 20);
  for (let left = total; left > 0; left -= zeros.length) {
    if (!deflate.write(left >= zeros.length ? zeros : zeros.subarray(0, left))) await once(deflate, 'drain');
  }
  deflate.end();
  await ended;
  return Buffer.concat(chunks);
}

/**
 * A flate bomb: a small, well-formed PDF whose one page's content stream is
 * `inflatedBytes` zero bytes, FlateDecode'd (about a thousandth of that on
 * disk). Built in the test, never committed as a file.
 */
export async function makeFlateBombPdf(inflatedBytes: number): Promise<Buffer> {
  const stream = await deflatedZeros(inflatedBytes, false);
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  const add = (b: Buffer) => parts.push(b);
  const size = () => parts.reduce((n, p) => n + p.length, 0);
  const object = (n: number, body: Buffer[]) => {
    offsets[n] = size();
    add(Buffer.from(`${n} 0 obj\n`));
    body.forEach(add);
    add(Buffer.from('\nendobj\n'));
  };
  object(1, [Buffer.from('<< /Type /Catalog /Pages 2 0 R >>')]);
  object(2, [Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>')]);
  object(3, [Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>')]);
  object(4, [Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`), stream, Buffer.from('\nendstream')]);
  const xref = size();
  const rows = [1, 2, 3, 4].map((n) => `${String(offsets[n]).padStart(10, '0')} 00000 n \n`).join('');
  add(Buffer.from(`xref\n0 5\n0000000000 65535 f \n${rows}trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/** A DOCX-named ZIP whose `word/document.xml` inflates to `inflatedBytes` zero bytes: the ZIP form of the same bomb. */
export async function makeZipBombDocx(inflatedBytes: number): Promise<Buffer> {
  const data = await deflatedZeros(inflatedBytes, true);
  const name = Buffer.from('word/document.xml');
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(inflatedBytes, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(inflatedBytes, 24);
  central.writeUInt16LE(name.length, 28);
  central.writeUInt32LE(0, 42);
  const cdOffset = local.length + name.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + name.length, 12);
  end.writeUInt32LE(cdOffset, 16);
  return Buffer.concat([local, name, data, central, name, end]);
}
