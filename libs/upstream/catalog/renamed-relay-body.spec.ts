import type { RelayBody } from '#core/upstream/upstream-relay.interface.js';
import { ModelNameRewriter, renamedRelayBody, withModelName } from './renamed-relay-body.js';

const chunk = (model: string, content: string): string =>
  `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":${JSON.stringify(model)},"choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}}}]}\n\n`;

function streamed(pieces: string[], rewriter = new ModelNameRewriter('gpt-5-mini')): string {
  return pieces.map((p) => rewriter.push(p)).join('') + rewriter.end();
}

describe('withModelName', () => {
  it('rewrites only the top-level model value, the other bytes as sent', () => {
    const body = '{"id":"x","model": "Qwen/Qwen3-30B-A3B","choices":[{"message":{"content":"the \\"model\\":\\"Qwen/Qwen3-30B-A3B\\" said"}}]}';
    expect(withModelName(body, 'gpt-5-mini')).toBe(body.replace('"model": "Qwen/Qwen3-30B-A3B"', '"model": "gpt-5-mini"'));
  });

  it('leaves errors, [DONE] and non-JSON alone', () => {
    for (const text of [' [DONE]', '{"error":{"message":"bad model","code":400}}', 'not json "model"']) expect(withModelName(text, 'gpt-5-mini')).toBe(text);
  });
});

describe('ModelNameRewriter', () => {
  const expected = chunk('gpt-5-mini', 'Hello') + chunk('gpt-5-mini', ' world') + 'data: [DONE]\n\n';
  const sent = chunk('sim', 'Hello') + chunk('sim', ' world') + 'data: [DONE]\n\n';

  it('renames every chunk however the stream is cut', () => {
    expect(streamed([sent])).toBe(expected);
    for (const size of [1, 7, 50]) {
      const pieces = sent.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
      expect(streamed(pieces)).toBe(expected);
    }
  });

  it('passes a line longer than it holds on unchanged, then renames the lines after it', () => {
    const huge = `: ${'x'.repeat(300 * 1024)}\n`;
    const pieces = [huge.slice(0, 280 * 1024), huge.slice(280 * 1024), chunk('sim', 'after')];
    expect(streamed(pieces)).toBe(huge + chunk('gpt-5-mini', 'after'));
  });
});

describe('renamedRelayBody', () => {
  const answer = (json: unknown, text: string[]): RelayBody => ({
    status: 200,
    contentType: 'application/json',
    json: async () => json,
    text: async (onText) => text.forEach(onText),
  });

  it('shows the public name in a JSON answer and keeps an error as sent', async () => {
    expect(await renamedRelayBody(answer({ id: 'c', model: 'sim', choices: [] }, []), 'gpt-5-mini').json()).toEqual({ id: 'c', model: 'gpt-5-mini', choices: [] });
    const error = { error: { message: 'no', code: 400 } };
    expect(await renamedRelayBody(answer(error, []), 'gpt-5-mini').json()).toEqual(error);
  });

  it('streams renamed text, a last line without its newline included', async () => {
    const out: string[] = [];
    await renamedRelayBody(answer(null, [chunk('sim', 'a'), 'data: {"model":"sim"}']), 'gpt-5-mini').text((t) => out.push(t));
    expect(out.join('')).toBe(chunk('gpt-5-mini', 'a') + 'data: {"model":"gpt-5-mini"}');
  });
});
