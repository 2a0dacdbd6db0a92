import type { PublicItem } from '#tool-sdk/items.js';
import { estimateTokens, renderTranscript, splitForCompaction } from './transcript.util.js';

const user = (text: string): PublicItem => ({ type: 'message', role: 'user', content: text });
const assistant = (text: string): PublicItem => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] });
const call = (id: string): PublicItem => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{"a":1}' });
const output = (id: string): PublicItem => ({ type: 'function_call_output', call_id: id, output: `out ${id}` });

describe('splitForCompaction', () => {
  it('keeps the newest items verbatim and summarizes the rest', () => {
    const items = [user('1'), assistant('2'), user('3'), assistant('4')];
    expect(splitForCompaction(items, 2)).toEqual({ head: items.slice(0, 2), tail: items.slice(2) });
  });

  it('always summarizes at least one item, and nothing of an empty transcript', () => {
    expect(splitForCompaction([user('only')], 5)).toEqual({ head: [user('only')], tail: [] });
    expect(splitForCompaction([], 2)).toBeNull();
  });

  it('never starts the tail with a call output or a call, nor splits a call from its output', () => {
    const items = [user('q'), call('c1'), output('c1'), assistant('a')];
    // The last two would be [output, assistant]: the output's call is summarized, so only the answer stays.
    expect(splitForCompaction(items, 2)!.tail).toEqual([assistant('a')]);
    const pending = [user('q'), assistant('thinking'), call('c2'), output('c2')];
    expect(splitForCompaction(pending, 3)!.tail).toEqual([assistant('thinking'), call('c2'), output('c2')]);
    expect(splitForCompaction(pending, 2)!.tail).toEqual([]);
  });

  it('keeps nothing verbatim with keep 0', () => {
    const items = [user('1'), assistant('2')];
    expect(splitForCompaction(items, 0)).toEqual({ head: items, tail: [] });
  });
});

describe('renderTranscript', () => {
  it('renders every kind of item as labelled text, leaving reasoning out and clipping huge outputs', () => {
    const text = renderTranscript(
      [
        user('hello'),
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'secret thoughts' }] },
        call('c1'),
        { ...output('c1'), output: 'x'.repeat(10_000) },
        { type: 'custom_tool_call', call_id: 'c2', name: 'patch', namespace: 'fs', input: 'diff' },
        { type: 'mcp_call', id: 'mcp_1', status: 'completed', server_label: 's', name: 'n', output: 'ok' },
        { type: 'compaction', encrypted_content: 'token' },
        assistant('bye'),
      ],
      () => 'earlier summary',
    );
    expect(text).toContain('[user] hello');
    expect(text).not.toContain('secret thoughts');
    expect(text).toContain('[assistant called tool f] {"a":1}');
    expect(text).toContain('characters left out');
    expect(text.length).toBeLessThan(6_000);
    expect(text).toContain('[assistant called tool fs.patch] diff');
    expect(text).toContain('[mcp_call] {"type":"mcp_call","server_label":"s","name":"n","output":"ok"}');
    expect(text).toContain('[summary of an earlier part of the conversation] earlier summary');
    expect(text).toContain('[assistant] bye');
  });

  it('estimates tokens as characters / 4 of the JSON', () => {
    const items = [user('abcd')];
    expect(estimateTokens(items)).toBe(Math.ceil(JSON.stringify(items).length / 4));
  });
});
