import type OpenAI from 'openai';
import { toFile } from 'openai';
import { startInterpreterStack, type InterpreterStack } from './support/code-interpreter/interpreter-stack.js';

const MODEL = 'switchyard-sim';
const TOOL = { type: 'code_interpreter' as const, container: { type: 'auto' as const } };
const run = (code: string) => `[[call code_interpreter ${JSON.stringify({ code })}]]`;
const LIST = run("import os\nprint(sorted(os.listdir('/mnt/data')))\nprint(open('/mnt/data/prices.csv').read())");

/** `input_file` parts of a request that declares code_interpreter land in the container's /mnt/data under their names. */
describe('code_interpreter: input files in /mnt/data (openai client, Pyodide backend)', () => {
  let running: InterpreterStack;
  let client: OpenAI;

  beforeAll(async () => {
    running = await startInterpreterStack('switchyard-ci-input-', { backend: 'pyodide', timeoutMs: 20_000, graceMs: 1_000, maxWorkers: 1, warmWorkers: 1 });
    ({ client } = running);
  }, 120_000);
  afterAll(() => running.close());

  it('places files given by file_data and by file_id, once per container', async () => {
    const csv = 'item,price\nkettle,30\n';
    const uploaded = await client.files.create({ file: await toFile(Buffer.from('a,b\n1,2\n'), 'table.csv'), purpose: 'user_data' });
    const response = await client.responses.create({
      model: MODEL,
      tools: [TOOL],
      include: ['code_interpreter_call.outputs'],
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: `List them. ${LIST}` },
            { type: 'input_file', filename: 'prices.csv', file_data: `data:text/csv;base64,${Buffer.from(csv).toString('base64')}` },
            { type: 'input_file', file_id: uploaded.id },
          ],
        },
      ],
    });
    const call = response.output.find((i) => i.type === 'code_interpreter_call') as any;
    expect(call.status).toBe('completed');
    expect(call.outputs[0].logs).toContain("['prices.csv', 'table.csv']");
    expect(call.outputs[0].logs).toContain('kettle,30');

    // The next turn continues the conversation in the same container: the files are there once, not copied again.
    const next = await client.responses.create({
      model: MODEL,
      tools: [TOOL],
      include: ['code_interpreter_call.outputs'],
      previous_response_id: response.id,
      input: `Again. ${run("import os\nprint(len(os.listdir('/mnt/data')))")}`,
    });
    const again = next.output.find((i) => i.type === 'code_interpreter_call') as any;
    expect(again.container_id).toBe(call.container_id);
    expect(again.outputs[0].logs.trim()).toBe('2');
  }, 120_000);

  it('an unreadable file_data is a 400 naming the part', async () => {
    await expect(
      client.responses.create({
        model: MODEL,
        tools: [TOOL],
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: LIST },
              { type: 'input_file', filename: 'x.csv', file_data: 'not base64!' },
            ],
          },
        ],
      }),
    ).rejects.toMatchObject({ status: 400 });
  }, 60_000);
});
