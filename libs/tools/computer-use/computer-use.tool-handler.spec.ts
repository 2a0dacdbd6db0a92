import { InvalidRequestError } from '#tool-sdk/index.js';
import { ComputerToolHandler, ComputerUseToolHandler, computerAction, computerActions } from './computer-use.tool-handler.js';

const handler = new ComputerUseToolHandler();
const shape = { kind: 'computer_call', name: 'computer' };
const history = { modelNameFor: () => undefined, clientCallName: () => undefined };
const declaration = { type: 'computer_use_preview', display_width: 1280, display_height: 720, environment: 'browser' };

function paramOf(run: () => unknown): string | null {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequestError);
    return (err as InvalidRequestError).param;
  }
  throw new Error('expected an InvalidRequestError');
}

describe('ComputerUseToolHandler', () => {
  it('checks the display and environment, naming the field', () => {
    expect(handler.validate(declaration, 'tools[0]')).toEqual({ displayWidth: 1280, displayHeight: 720, environment: 'browser' });
    expect(paramOf(() => handler.validate({ ...declaration, display_height: 1.5 }, 'tools[1]'))).toBe('tools[1].display_height');
    expect(paramOf(() => handler.validate({ ...declaration, environment: 'amiga' }, 'tools[1]'))).toBe('tools[1].environment');
  });

  it('tells the model the screen it controls, and echoes the declaration', () => {
    const params = handler.validate(declaration, 'tools[0]');
    const [tool] = handler.normalize(params, undefined, { takenNames: new Set() });
    expect(tool.fn.description).toContain('browser computer whose screen is 1280x720');
    expect(tool.clientShape).toMatchObject({ kind: 'computer_call', relay: { kind: 'restored' }, omitName: true });
    expect(handler.publicDeclaration(params)).toEqual(declaration);
  });

  it.each([
    [
      { type: 'click', x: 1, y: 2, button: 'right', extra: 1 },
      { type: 'click', x: 1, y: 2, button: 'right' },
    ],
    [
      { type: 'double_click', x: 1, y: 2 },
      { type: 'double_click', x: 1, y: 2, keys: null },
    ],
    [
      {
        type: 'drag',
        path: [
          { x: 1, y: 1 },
          { x: 5, y: 5 },
        ],
      },
      {
        type: 'drag',
        path: [
          { x: 1, y: 1 },
          { x: 5, y: 5 },
        ],
      },
    ],
    [
      { type: 'keypress', keys: ['CTRL', 'C'] },
      { type: 'keypress', keys: ['CTRL', 'C'] },
    ],
    [
      { type: 'scroll', x: 0, y: 0, scroll_x: 0, scroll_y: -300 },
      { type: 'scroll', x: 0, y: 0, scroll_x: 0, scroll_y: -300 },
    ],
    [
      { type: 'type', text: 'hi' },
      { type: 'type', text: 'hi' },
    ],
    [{ type: 'screenshot' }, { type: 'screenshot' }],
    [{ type: 'wait' }, { type: 'wait' }],
    [
      { type: 'move', x: 3, y: 4, keys: ['SHIFT'] },
      { type: 'move', x: 3, y: 4, keys: ['SHIFT'] },
    ],
  ])('restores %j as one action of the union', (given, expected) => {
    expect(handler.clientCalls.restore(JSON.stringify({ action: given }), shape)).toEqual({ fields: { action: expected, pending_safety_checks: [] } });
  });

  it.each([{ type: 'teleport' }, { type: 'click', x: 1, y: 2 }, { type: 'click', x: 1, y: 2, button: 'middle' }, { type: 'drag', path: [] }, { type: 'type', text: 5 }])(
    'refuses %j with a text the model can act on',
    (action) => {
      expect('error' in computerAction(JSON.stringify({ action }))).toBe(true);
      const restored = handler.clientCalls.restore(JSON.stringify({ action }), shape) as { error: string };
      expect(JSON.parse(restored.error).error.code).toBe('invalid_computer_action');
    },
  );

  it('shows the screenshot to the model as an image, by URL or by file id', () => {
    const byUrl = handler.toModelItems({ type: 'computer_call_output', call_id: 'c', output: { type: 'computer_screenshot', image_url: 'data:image/png;base64,AA' } }, history);
    expect(byUrl).toEqual([
      {
        type: 'function_call_output',
        call_id: 'c',
        output: [
          { type: 'input_text', text: 'Screenshot after the action:' },
          { type: 'input_image', detail: 'auto', image_url: 'data:image/png;base64,AA' },
        ],
      },
    ]);
    const byFile = handler.toModelItems({ type: 'computer_call_output', call_id: 'c', output: { type: 'computer_screenshot', file_id: 'file-1' } }, history);
    expect((byFile[0] as { output: unknown[] }).output[1]).toEqual({ type: 'input_image', detail: 'auto', file_id: 'file-1' });
    expect(handler.toModelItems({ type: 'computer_call', call_id: 'c', action: { type: 'wait' } }, history)).toEqual([
      { type: 'function_call', call_id: 'c', name: 'computer', arguments: '{"action":{"type":"wait"}}' },
    ]);
  });
});

describe('ComputerToolHandler (GA computer)', () => {
  const ga = new ComputerToolHandler();

  it('takes no display, and restores a batch of actions in order', () => {
    expect(ga.validate()).toEqual({});
    expect(ga.publicDeclaration()).toEqual({ type: 'computer' });
    const restored = ga.clientCalls.restore(JSON.stringify({ actions: [{ type: 'move', x: 1, y: 2 }, { type: 'wait' }] }), shape);
    expect(restored).toEqual({ fields: { actions: [{ type: 'move', x: 1, y: 2 }, { type: 'wait' }], pending_safety_checks: [] } });
    expect(ga.toolChoice.types).toEqual(['computer', 'computer_use']);
  });

  it('refuses an empty batch, or names the action that is wrong', () => {
    expect((computerActions('{"actions": []}') as { error: string }).error).toMatch(/non-empty "actions"/);
    expect((computerActions('{"actions": [{"type": "wait"}, {"type": "click", "x": 1, "button": "left"}]}') as { error: string }).error).toBe(
      'actions[1].y is required for a click action.',
    );
  });

  it('the preview handler replays either form of computer_call', () => {
    expect(handler.toModelItems({ type: 'computer_call', call_id: 'c', actions: [{ type: 'wait' }] }, history)).toEqual([
      { type: 'function_call', call_id: 'c', name: 'computer', arguments: '{"actions":[{"type":"wait"}]}' },
    ]);
  });
});
