import { affinityKeyOf, parseRelayRequest, relayCost } from './relay-request.js';
import { UsageSniffer } from './usage-sniffer.js';

describe('parseRelayRequest', () => {
  it('gives every turn of one chat the key of its opening, and other chats other keys', () => {
    const opening = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello' },
    ];
    const first = affinityKeyOf('/chat/completions', { model: 'm', messages: opening });
    const later = affinityKeyOf('/chat/completions', { model: 'm', messages: [...opening, { role: 'assistant', content: 'hi' }, { role: 'user', content: 'more' }] });
    const other = affinityKeyOf('/chat/completions', { model: 'm', messages: [opening[0], { role: 'user', content: 'another' }] });
    expect(later).toBe(first);
    expect(other).not.toBe(first);
    expect(affinityKeyOf('/chat/completions', { model: 'm2', messages: opening })).not.toBe(first);
    expect(affinityKeyOf('/chat/completions', { model: 'm', messages: opening, prompt_cache_key: 'k' })).toBe('key:k');
  });

  it('keys a completion by its prompt opening only', () => {
    const long = 'x'.repeat(5000);
    expect(affinityKeyOf('/completions', { model: 'm', prompt: `${long}tail one` })).toBe(affinityKeyOf('/completions', { model: 'm', prompt: `${long}tail two` }));
    expect(affinityKeyOf('/completions', { model: 'm', prompt: 'a' })).not.toBe(affinityKeyOf('/completions', { model: 'm', prompt: 'b' }));
  });

  it('fills the default model, and names the field it refuses', () => {
    expect(parseRelayRequest('/embeddings', { input: 'x' }, 'dflt')).toMatchObject({ model: 'dflt', body: { model: 'dflt', input: 'x' }, stream: false });
    const refused = (path: Parameters<typeof parseRelayRequest>[0], body: unknown, model?: string) => {
      try {
        parseRelayRequest(path, body, model);
      } catch (e) {
        return (e as { param: string | null }).param;
      }
      return 'accepted';
    };
    expect(refused('/embeddings', { input: 'x' })).toBe('model');
    expect(refused('/chat/completions', { model: 'm', messages: 'hi' })).toBe('messages');
    expect(refused('/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }], stream_options: { include_usage: true } })).toBe('stream_options');
    expect(refused('/completions', [])).toBeNull();
  });
});

describe('UsageSniffer', () => {
  it('finds the usage chunk of a stream however the chunks split it', () => {
    const wire =
      'data: {"choices":[{"delta":{"content":"a"}}],"usage":null}\n\n' +
      'data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}\n\n' +
      'data: [DONE]';
    for (const size of [1, 5, 17, wire.length]) {
      const sniffer = new UsageSniffer();
      let out = '';
      // A last line without its newline: passed on once, as it came.
      for (let i = 0; i < wire.length; i += size) out += sniffer.push(wire.slice(i, i + size));
      out += sniffer.end();
      expect(out).toBe(wire);
      expect(sniffer.usage).toMatchObject({ input_tokens: 7, output_tokens: 3, total_tokens: 10 });
    }
  });

  it('with strip, passes every line on but the usage chunk, however the chunks split it', () => {
    const content = 'data: {"choices":[{"delta":{"content":"usage"}}],"usage":null}\n\n';
    const wire = `${content}data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}\n\ndata: [DONE]\n\n`;
    for (const size of [1, 5, 17, wire.length]) {
      const sniffer = new UsageSniffer(true);
      let out = '';
      for (let i = 0; i < wire.length; i += size) out += sniffer.push(wire.slice(i, i + size));
      out += sniffer.end();
      expect(out).toBe(`${content}data: [DONE]\n\n`);
      expect(sniffer.usage).toMatchObject({ input_tokens: 7, output_tokens: 3, total_tokens: 10, input_tokens_details: { cached_tokens: 4 } });
    }
  });
});

describe('relayCost', () => {
  it('estimates the prompt and adds the output bound of every choice', () => {
    const messages = [{ role: 'user', content: 'x'.repeat(300) }];
    const { prompt } = relayCost('/chat/completions', { model: 'm', messages });
    expect(prompt).toBeGreaterThanOrEqual(100);
    expect(relayCost('/chat/completions', { model: 'm', messages, max_tokens: 50, n: 3 })).toEqual({ prompt, output: 150 });
    expect(relayCost('/chat/completions', { model: 'm', messages, max_completion_tokens: 20, max_tokens: 50 })).toEqual({ prompt, output: 20 });
    expect(relayCost('/completions', { model: 'm', prompt: 'abcdef', max_tokens: 10 })).toEqual({ prompt: 2, output: 10 });
    expect(relayCost('/embeddings', { model: 'm', input: 'abcdef', max_tokens: 10 })).toEqual({ prompt: 2, output: 0 });
  });
});
