import { InvalidRequestError } from '#tool-sdk/index.js';
import { ShellToolHandler, shellAction } from './shell.tool-handler.js';

const handler = new ShellToolHandler();
const none = { takenNames: new Set<string>() };
const history = { modelNameFor: (name: string) => (name === 'shell' ? 'shell_2' : undefined), clientCallName: () => undefined };

describe('ShellToolHandler', () => {
  it('is client-owned, offered as a function whose calls are restored to shell_call', () => {
    expect(handler.gatewayOwned).toBe(false);
    const [tool] = handler.normalize(handler.validate({ type: 'shell', environment: { type: 'local' } }, 'tools[0]'), undefined, none);
    expect(tool.fn.name).toBe('shell');
    expect(tool.fn.parameters).toMatchObject({ required: ['commands'] });
    expect(tool.clientShape).toEqual({
      kind: 'shell_call',
      name: 'shell',
      relay: { kind: 'restored' },
      idPrefix: 'sh',
      omitName: true,
      trailingFields: { environment: { type: 'local' } },
    });
  });

  it('takes another model-visible name when a function is already called shell', () => {
    const [tool] = handler.normalize({ environment: null }, undefined, { takenNames: new Set(['shell']) });
    expect(tool.fn.name).not.toBe('shell');
    expect(tool.toolName).toBe('shell');
  });

  it('refuses a hosted environment, naming the field', () => {
    expect(() => handler.validate({ type: 'shell', environment: { type: 'container_auto' } }, 'tools[2]')).toThrow(
      expect.objectContaining({ param: 'tools[2].environment.type' }) as unknown as InvalidRequestError,
    );
    expect(handler.validate({ type: 'shell', environment: null }, 'tools[0]')).toEqual({ environment: null });
  });

  it('restores the action with one added/delta/done event triple per command', () => {
    const restored = handler.clientCalls.restore('{"commands": ["ls", "pwd"], "max_output_length": 100}', { kind: 'shell_call', name: 'shell' });
    expect(restored).toEqual({
      fields: { action: { commands: ['ls', 'pwd'], timeout_ms: null, max_output_length: 100 } },
      events: [
        { type: 'response.shell_call_command.added', command_index: 0, command: '' },
        { type: 'response.shell_call_command.delta', command_index: 0, delta: 'ls' },
        { type: 'response.shell_call_command.done', command_index: 0, command: 'ls' },
        { type: 'response.shell_call_command.added', command_index: 1, command: '' },
        { type: 'response.shell_call_command.delta', command_index: 1, delta: 'pwd' },
        { type: 'response.shell_call_command.done', command_index: 1, command: 'pwd' },
      ],
    });
  });

  it.each(['not json', '{"commands": []}', '{"commands": [1]}', '{"commands": ["ls"], "timeout_ms": -5}', '[]'])('refuses arguments that are no list of commands: %s', (args) => {
    expect('error' in shellAction(args)).toBe(true);
    const restored = handler.clientCalls.restore(args, { kind: 'shell_call', name: 'shell' });
    expect(JSON.parse((restored as { error: string }).error).error.code).toBe('invalid_shell_call');
  });

  it('replays the call as the function the model called and the output per command, cut to max_output_length', () => {
    const call = { type: 'shell_call', id: 'sh_1', call_id: 'c1', action: { commands: ['cat big'], timeout_ms: 10, max_output_length: 4 } };
    expect(handler.toModelItems(call, history)).toEqual([
      { type: 'function_call', call_id: 'c1', name: 'shell_2', arguments: '{"commands":["cat big"],"timeout_ms":10,"max_output_length":4}' },
    ]);
    const output = { type: 'shell_call_output', call_id: 'c1', max_output_length: 4, output: [{ stdout: 'abcdefgh', stderr: '', outcome: { type: 'timeout' } }] };
    const [item] = handler.toModelItems(output, history);
    expect(JSON.parse((item as { output: string }).output)).toEqual([{ stdout: 'abcd\n[... 4 more characters cut]', stderr: '', outcome: 'timeout' }]);
  });
});
