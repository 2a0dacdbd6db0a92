import type { PublicItem } from '#tool-sdk/items.js';
import { assertOutputsAnswerCalls } from './orphan-outputs.js';

const call = (callId: string, type = 'function_call'): PublicItem => ({ type, call_id: callId, name: 'f', arguments: '{}', input: '' }) as unknown as PublicItem;
const output = (callId: string, type = 'function_call_output'): PublicItem => ({ type, call_id: callId, output: 'x' }) as unknown as PublicItem;
/** A tool module's own output type, as `ToolHandlerExplorer.callOutputTypes` lists it beside the model's. */
const withCustom = new Set(['function_call_output', 'custom_tool_call_output']);

describe('tool outputs must answer a call', () => {
  it('accepts outputs for calls earlier in the input, in the prior public items or in the prior transcript', () => {
    expect(() =>
      assertOutputsAnswerCalls(
        [call('a'), output('a'), output('b'), output('c', 'custom_tool_call_output')],
        [call('b')],
        [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }],
        withCustom,
      ),
    ).not.toThrow();
    expect(() => assertOutputsAnswerCalls([call('k', 'custom_tool_call'), output('k', 'custom_tool_call_output')], [], [], withCustom)).not.toThrow();
  });

  it('checks only the output types it is given', () => {
    expect(() => assertOutputsAnswerCalls([output('k', 'custom_tool_call_output')], [], [])).not.toThrow();
    expect(() => assertOutputsAnswerCalls([output('k', 'custom_tool_call_output')], [], [], withCustom)).toThrow(expect.objectContaining({ param: 'input[0].call_id' }));
  });

  it('names the first orphan by its index, also when its call comes only after it', () => {
    expect(() => assertOutputsAnswerCalls([call('a'), output('a'), output('z'), call('z')], [], [])).toThrow(
      expect.objectContaining({ name: 'InvalidRequestError', param: 'input[2].call_id', code: 'tool_call_not_found' }),
    );
  });

  it('does not count an output as a call: two outputs for one id need one call', () => {
    expect(() => assertOutputsAnswerCalls([output('a'), output('a')], [output('a')], [])).toThrow(expect.objectContaining({ param: 'input[0].call_id' }));
  });

  it('checks 100 000 call/output pairs in one request', () => {
    const items: PublicItem[] = [];
    for (let i = 0; i < 100_000; i++) items.push(call(`c${i}`), output(`c${i}`));
    expect(() => assertOutputsAnswerCalls(items, [], [])).not.toThrow();
  });
});
