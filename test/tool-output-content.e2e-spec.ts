import Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const MODEL = 'switchyard-sim';

/**
 * A PNG's signature and header chunk for the given size, padded with `padding`
 * bytes: the simulated model does not decode images, and the gateway reads
 * only the header (for its token estimate).
 */
function png(width: number, height: number, padding = 0): Buffer {
  const header = Buffer.alloc(29);
  Buffer.from('89504e470d0a1a0a', 'hex').copy(header, 0);
  header.writeUInt32BE(13, 8);
  header.write('IHDR', 12, 'latin1');
  header.writeUInt32BE(width, 16);
  header.writeUInt32BE(height, 20);
  header.writeUInt8(8, 24);
  header.writeUInt8(6, 25);
  return Buffer.concat([header, Buffer.alloc(padding, 7)]);
}

const dataUrl = (bytes: Buffer, mime = 'image/png') => `data:${mime};base64,${bytes.toString('base64')}`;
const IMAGE = dataUrl(png(64, 48));

/**
 * Tool outputs with images and files reach the model server whole, on both
 * upstream dialects, as sent by the official clients: the bytes checked are
 * the ones the simulated upstream received.
 */
describe.each(['responses', 'chat'] as const)('tool output content, upstream dialect %s', (dialect) => {
  let stack: GatewayStack;
  let client: OpenAI;
  const upstreamBody = (): any => stack.simulator.requests.at(-1)!.body;

  /**
   * The model-side view of one call's output: the output list on the
   * responses dialect; on the chat dialect the tool message's text and the
   * parts of the user message that follows the run of tool messages.
   */
  function outputSent(callId: string): { text: string; images: string[]; whose?: string } {
    const body = upstreamBody();
    if (dialect === 'responses') {
      const item = (body.input as any[]).find((i) => i.type === 'function_call_output' && i.call_id === callId);
      expect(Array.isArray(item.output)).toBe(true);
      return {
        text: item.output
          .filter((p: any) => p.type === 'input_text')
          .map((p: any) => p.text)
          .join('\n'),
        images: item.output.filter((p: any) => p.type === 'input_image').map((p: any) => p.image_url),
      };
    }
    const messages = body.messages as any[];
    const at = messages.findIndex((m) => m.role === 'tool' && m.tool_call_id === callId);
    expect(at).toBeGreaterThanOrEqual(0);
    const tool = messages[at];
    expect(typeof tool.content).toBe('string');
    let next = at + 1;
    while (messages[next]?.role === 'tool') next++;
    const follow = messages[next];
    expect(follow.role).toBe('user');
    const parts = follow.content as any[];
    const start = parts.findIndex((p) => p.type === 'text' && p.text.includes(callId));
    const images: string[] = [];
    for (let k = start + 1; k < parts.length && parts[k].type === 'image_url'; k++) images.push(parts[k].image_url.url);
    return { text: tool.content, images, whose: parts[start].text };
  }

  const functionTool = { type: 'function' as const, name: 'view_image', parameters: { type: 'object', properties: { path: { type: 'string' } } }, strict: false };
  const call = (callId: string, name = 'view_image') => ({ type: 'function_call' as const, call_id: callId, name, arguments: '{"path":"a.png"}' });

  beforeAll(async () => {
    stack = await startStack({ dialect });
    client = stack.openai;
  });
  afterAll(() => stack.close());

  it('function_call_output: text and image reach the upstream', async () => {
    await client.responses.create({
      model: MODEL,
      tools: [functionTool],
      input: [
        { role: 'user', content: 'Look at a.png [[say done]]' },
        call('call_img1'),
        {
          type: 'function_call_output',
          call_id: 'call_img1',
          output: [
            { type: 'input_text', text: 'a.png, 64x48' },
            { type: 'input_image', image_url: IMAGE, detail: 'high' },
          ],
        },
      ],
    });
    const sent = outputSent('call_img1');
    expect(sent.text).toContain('a.png, 64x48');
    expect(sent.images).toEqual([IMAGE]);
    if (dialect === 'chat') expect(sent.whose).toBe('Output of the view_image call call_img1:');
  });

  it('parallel outputs keep their tool messages together and the images in call order', async () => {
    const second = dataUrl(png(10, 10));
    await client.responses.create({
      model: MODEL,
      tools: [functionTool],
      input: [
        { role: 'user', content: 'Look at both [[say done]]' },
        call('call_p1'),
        call('call_p2'),
        { type: 'function_call_output', call_id: 'call_p1', output: [{ type: 'input_image', image_url: IMAGE }] },
        { type: 'function_call_output', call_id: 'call_p2', output: [{ type: 'input_image', image_url: second }] },
      ],
    });
    expect(outputSent('call_p1').images).toEqual([IMAGE]);
    expect(outputSent('call_p2').images).toEqual([second]);
    if (dialect === 'chat') {
      const roles = (upstreamBody().messages as any[]).map((m) => m.role);
      expect(roles).toEqual(['user', 'assistant', 'tool', 'tool', 'user']);
    }
  });

  it('custom_tool_call_output and computer_call_output carry their images', async () => {
    await client.responses.create({
      model: MODEL,
      tools: [{ type: 'custom', name: 'screenshot', description: 'Take one' }],
      input: [
        { role: 'user', content: 'Shoot [[say done]]' },
        { type: 'custom_tool_call', call_id: 'call_c1', name: 'screenshot', input: 'now' },
        {
          type: 'custom_tool_call_output',
          call_id: 'call_c1',
          output: [
            { type: 'input_text', text: 'shot' },
            { type: 'input_image', image_url: IMAGE },
          ],
        } as any,
      ],
    });
    expect(outputSent('call_c1')).toMatchObject({ images: [IMAGE] });
    expect(outputSent('call_c1').text).toContain('shot');

    const tools = [{ type: 'computer_use_preview', display_width: 800, display_height: 600, environment: 'linux' }] as any;
    const first = await client.responses.create({ model: MODEL, input: '[[call computer {"action": {"type": "screenshot"}}]]', tools });
    const computerCall = first.output.find((i) => i.type === 'computer_call') as any;
    await client.responses.create({
      model: MODEL,
      previous_response_id: first.id,
      tools,
      input: [{ type: 'computer_call_output', call_id: computerCall.call_id, output: { type: 'computer_screenshot', image_url: IMAGE } } as any],
    });
    expect(outputSent(computerCall.call_id).images).toEqual([IMAGE]);
  });

  it('an input_file in a tool output reaches the model as its text', async () => {
    const text = 'The Larkspur kettle boils in ninety seconds.';
    await client.responses.create({
      model: MODEL,
      tools: [functionTool],
      input: [
        { role: 'user', content: 'Read notes.txt [[say done]]' },
        call('call_f1', 'read'),
        {
          type: 'function_call_output',
          call_id: 'call_f1',
          output: [{ type: 'input_file', filename: 'notes.txt', file_data: `data:text/plain;base64,${Buffer.from(text).toString('base64')}` }],
        },
      ],
    });
    const body = JSON.stringify(upstreamBody());
    expect(body).toContain('<file name=\\"notes.txt\\">');
    expect(body).toContain(text);
  });

  it('stored outputs are replayed with their images (previous_response_id, conversation)', async () => {
    const first = await client.responses.create({
      model: MODEL,
      tools: [functionTool],
      store: true,
      input: [
        { role: 'user', content: 'Look [[say seen]]' },
        call('call_s1'),
        {
          type: 'function_call_output',
          call_id: 'call_s1',
          output: [
            { type: 'input_text', text: 'here' },
            { type: 'input_image', image_url: IMAGE },
          ],
        },
      ],
    });
    await client.responses.create({ model: MODEL, tools: [functionTool], previous_response_id: first.id, input: 'And now? [[say still seen]]' });
    expect(outputSent('call_s1').images).toEqual([IMAGE]);

    const conversation = await client.conversations.create({
      items: [
        { type: 'message', role: 'user', content: 'Look' },
        call('call_v1') as any,
        { type: 'function_call_output', call_id: 'call_v1', output: [{ type: 'input_image', image_url: IMAGE }] } as any,
      ],
    });
    await client.responses.create({ model: MODEL, tools: [functionTool], conversation: conversation.id, input: 'What was it? [[say a picture]]' });
    expect(outputSent('call_v1').images).toEqual([IMAGE]);
  });

  it.each([10, 100])('%i images in one output all reach the upstream, in order', async (count) => {
    const images = Array.from({ length: count }, (_, k) => dataUrl(png(16 + k, 16)));
    await client.responses.create({
      model: MODEL,
      tools: [functionTool],
      input: [
        { role: 'user', content: 'Look at all [[say done]]' },
        call('call_many'),
        { type: 'function_call_output', call_id: 'call_many', output: images.map((image_url) => ({ type: 'input_image' as const, image_url })) },
      ],
    });
    expect(outputSent('call_many').images).toEqual(images);
  });

  it('Messages tool_result with an image and a document reaches the upstream', async () => {
    const anthropic = new Anthropic({ baseURL: stack.url.replace(/\/v1$/, ''), apiKey: 'x', maxRetries: 0, timeout: 20_000 });
    const base64 = png(64, 48).toString('base64');
    await anthropic.messages.create({
      model: MODEL,
      max_tokens: 256,
      tools: [{ name: 'Read', description: 'Read a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } }],
      messages: [
        { role: 'user', content: 'Read a.png and b.txt [[say done]]' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'a.png' } },
            { type: 'tool_use', id: 'toolu_2', name: 'Read', input: { file_path: 'b.txt' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: base64 } }] },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              content: [{ type: 'document', title: 'b.txt', source: { type: 'text', media_type: 'text/plain', data: 'Bees are busy.' } }],
            },
          ],
        },
      ],
    });
    expect(outputSent('toolu_1').images).toEqual([`data:image/png;base64,${base64}`]);
    const body = JSON.stringify(upstreamBody());
    expect(body).toContain('Bees are busy.');
  });
});

/** The output budget is fitted with images counted at what a vision model spends on them, not their base64 size. */
describe.each(['responses', 'chat'] as const)('tool output images in budget clamping, upstream dialect %s', (dialect) => {
  let stack: GatewayStack;
  beforeAll(async () => {
    // Without a tokenizer route the gateway fits the budget on its own estimate.
    stack = await startStack({ dialect, simulator: { maxModelLen: 8192, tokenize: false } });
  });
  afterAll(() => stack.close());

  const budgetSent = (): number => {
    const body = stack.simulator.requests.at(-1)!.body as any;
    return dialect === 'responses' ? body.max_output_tokens : body.max_tokens;
  };

  async function askWith(image: string | null): Promise<number> {
    await stack.openai.responses.create({
      model: MODEL,
      max_output_tokens: 8192,
      input: [
        { role: 'user', content: 'Look [[say done]]' },
        { type: 'function_call', call_id: 'call_b', name: 'view', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_b', output: image ? [{ type: 'input_image', image_url: image }] : 'no image' },
      ],
    });
    return budgetSent();
  }

  it('a 1120x1120 image takes about 1600 tokens of the budget, however many bytes it has', async () => {
    const without = await askWith(null);
    // 300 kB of data behind the header: at three bytes a token that alone would be 130 000 tokens.
    const withImage = await askWith(dataUrl(png(1120, 1120, 300_000)));
    expect(without).toBeLessThan(8192);
    expect(without - withImage).toBeGreaterThanOrEqual(1600);
    expect(without - withImage).toBeLessThan(1700);
  });
});
