import type { ModelItem } from '#tool-sdk/items.js';
import { toChatMessages } from './chat-request.mapper.js';

const IMAGE = 'data:image/png;base64,iVBORw0KGgo=';

const history: ModelItem[] = [
  { type: 'message', role: 'user', content: 'look' },
  { type: 'function_call', call_id: 'c1', name: 'view_image', arguments: '{}' },
  { type: 'function_call', call_id: 'c2', name: 'view_image', arguments: '{}' },
  {
    type: 'function_call_output',
    call_id: 'c1',
    output: [
      { type: 'input_text', text: 'first' },
      { type: 'input_image', image_url: IMAGE },
    ],
  },
  { type: 'function_call_output', call_id: 'c2', output: 'no image' },
  { type: 'message', role: 'user', content: 'and?' },
];

describe('toChatMessages: images of tool outputs', () => {
  it('user-message (default): the tool message keeps the text, a user message after the run of tool messages carries the image and says whose', () => {
    const messages = toChatMessages(null, history);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user', 'user']);
    expect(messages[2]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'first\n(An image of this output follows in the next user message.)' });
    expect(messages[3]).toEqual({ role: 'tool', tool_call_id: 'c2', content: 'no image' });
    expect(messages[4].content).toEqual([
      { type: 'text', text: 'Output of the view_image call c1:' },
      { type: 'image_url', image_url: { url: IMAGE } },
    ]);
    expect(messages[5]).toEqual({ role: 'user', content: 'and?' });
  });

  it('tool-message: the image is a content part of the tool message', () => {
    const messages = toChatMessages(null, history, 'tool-message');
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user']);
    expect(messages[2].content).toEqual([
      { type: 'text', text: 'first' },
      { type: 'image_url', image_url: { url: IMAGE } },
    ]);
  });

  it('an output list of text alone stays a string', () => {
    const messages = toChatMessages(null, [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_text', text: 'a' }] }]);
    expect(messages).toEqual([{ role: 'tool', tool_call_id: 'c', content: 'a' }]);
  });
});
