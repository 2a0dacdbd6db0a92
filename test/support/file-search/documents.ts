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
