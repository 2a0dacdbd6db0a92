import OpenAI, { toFile } from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { makeDocx, makePdf } from './support/file-search/documents.js';

/** A PNG's signature and header chunk: enough for its type to be recognised (the simulated model does not decode images). */
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

const dataUrl = (mime: string, bytes: Buffer) => `data:${mime};base64,${bytes.toString('base64')}`;

/** Files in messages (`input_file`, `input_image` by `file_id`) through the openai client, as the model server receives them. */
describe.each(['responses', 'chat'] as const)('message files, upstream dialect %s', (dialect) => {
  let stack: GatewayStack;
  let client: OpenAI;
  /** The user message content of the last inference call, in the upstream's own shape. */
  const lastUserContent = (): any[] | string => {
    const body = stack.simulator.requests.at(-1)!.body as any;
    const items = dialect === 'responses' ? body.input : body.messages;
    return items.find((m: any) => m.role === 'user').content;
  };
  const textSent = (): string => {
    const content = lastUserContent();
    return typeof content === 'string' ? content : content.map((p: any) => p.text ?? '').join('\n');
  };

  beforeAll(async () => {
    stack = await startStack({ dialect });
    client = stack.openai;
  });
  afterAll(() => stack.close());

  it('turns a PDF from the Files API into text in the message, and stores the part as sent', async () => {
    const pdf = await client.files.create({ file: await toFile(await makePdf(['The Larkspur kettle warranty lasts thirty-six months.']), 'warranty.pdf'), purpose: 'user_data' });
    const response = await client.responses.create({
      model: 'm',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: '[[say read it]] How long is the warranty?' },
            { type: 'input_file', file_id: pdf.id },
          ],
        },
      ],
    });
    expect(response.output_text).toBe('read it');
    expect(textSent()).toContain('<file name="warranty.pdf">');
    expect(textSent()).toContain('The Larkspur kettle warranty lasts thirty-six months.');
    expect(JSON.stringify(lastUserContent())).not.toContain('input_file');
    const items = await client.responses.inputItems.list(response.id);
    expect((items.data[0] as any).content[1]).toMatchObject({ type: 'input_file', file_id: pdf.id });
  });

  it('reads inline file_data: DOCX, HTML and plain text', async () => {
    const docx = await makeDocx(['Descale the kettle monthly with citric acid.']);
    await client.responses.create({
      model: 'm',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: '[[say ok]]' },
            { type: 'input_file', filename: 'care.docx', file_data: dataUrl('application/vnd.openxmlformats-officedocument.wordprocessingml.document', docx) },
            { type: 'input_file', filename: 'page.html', file_data: dataUrl('text/html', Buffer.from('<html><body><h1>Opening hours</h1><p>Nine to five.</p></body></html>')) },
            { type: 'input_file', filename: 'note.txt', file_data: Buffer.from('plain note text').toString('base64') },
          ],
        },
      ],
    });
    const sent = textSent();
    expect(sent).toContain('Descale the kettle monthly with citric acid.');
    expect(sent).toMatch(/Opening hours/i);
    expect(sent).toContain('Nine to five.');
    expect(sent).not.toContain('<p>');
    expect(sent).toContain('plain note text');
    // In the order the parts were given.
    expect(sent.indexOf('care.docx')).toBeLessThan(sent.indexOf('page.html'));
    expect(sent.indexOf('page.html')).toBeLessThan(sent.indexOf('note.txt'));
  });

  it('passes an image given by file_id to the model as a data URL, with its detail', async () => {
    const image = await client.files.create({ file: await toFile(PNG, 'pixel.png'), purpose: 'vision' });
    await client.responses.create({
      model: 'm',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: '[[say seen]] what is this?' },
            { type: 'input_image', file_id: image.id, detail: 'low' },
          ],
        },
      ],
    });
    const content = lastUserContent() as any[];
    const expected = `data:image/png;base64,${PNG.toString('base64')}`;
    if (dialect === 'responses') expect(content).toContainEqual({ type: 'input_image', image_url: expected, detail: 'low' });
    else expect(content).toContainEqual({ type: 'image_url', image_url: { url: expected, detail: 'low' } });
  });

  it('keeps a file readable on later turns, by previous_response_id and in a conversation', async () => {
    const note = await client.files.create({ file: await toFile(Buffer.from('The gate code is 4417.'), 'gate.txt'), purpose: 'user_data' });
    const opening = [
      {
        role: 'user' as const,
        content: [
          { type: 'input_text' as const, text: '[[say noted]]' },
          { type: 'input_file' as const, file_id: note.id },
        ],
      },
    ];
    const first = await client.responses.create({ model: 'm', input: opening });
    await client.responses.create({ model: 'm', previous_response_id: first.id, input: '[[say again]] what was the code?' });
    const allText = () => JSON.stringify((stack.simulator.requests.at(-1)!.body as any)[dialect === 'responses' ? 'input' : 'messages']);
    expect(allText()).toContain('The gate code is 4417.');
    expect(allText()).not.toContain('input_file');
    const conversation = await client.conversations.create({});
    await client.responses.create({ model: 'm', conversation: conversation.id, input: opening });
    await client.responses.create({ model: 'm', conversation: conversation.id, input: '[[say again]] and now?' });
    expect(allText()).toContain('The gate code is 4417.');
    expect(allText()).not.toContain('input_file');
  });

  it('answers a file it cannot read, or an image that is not one, with a 400 naming the part', async () => {
    const notImage = await client.files.create({ file: await toFile(Buffer.from('just text'), 'x.txt'), purpose: 'vision' });
    const errorOf = (input: any) =>
      client.responses.create({ model: 'm', input }).then(
        () => null,
        (e: InstanceType<typeof OpenAI.APIError>) => ({ status: e.status, param: (e.error as any)?.param }),
      );
    expect(
      await errorOf([
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'x' },
            { type: 'input_image', file_id: notImage.id },
          ],
        },
      ]),
    ).toEqual({
      status: 400,
      param: 'input[0].content[1].file_id',
    });
    expect(
      await errorOf([
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'x' },
            { type: 'input_file', filename: 'blob.bin', file_data: Buffer.from([0, 1, 2, 3, 255]).toString('base64') },
          ],
        },
      ]),
    ).toEqual({ status: 400, param: 'input[0].content[1].file_data' });
    expect(await errorOf([{ role: 'user', content: [{ type: 'input_file', file_id: 'file-nope' }] }])).toEqual({ status: 404, param: 'input[0].content[0].file_id' });
  });
});
