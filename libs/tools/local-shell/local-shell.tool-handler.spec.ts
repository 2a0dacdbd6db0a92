import { LocalShellToolHandler, execAction } from './local-shell.tool-handler.js';

const handler = new LocalShellToolHandler();
const history = { modelNameFor: () => 'local_shell', clientCallName: () => undefined };

describe('LocalShellToolHandler', () => {
  it('is client-owned and restores calls to local_shell_call', () => {
    const [tool] = handler.normalize({}, undefined, { takenNames: new Set() });
    expect(tool.fn.name).toBe('local_shell');
    expect(tool.clientShape).toMatchObject({ kind: 'local_shell_call', relay: { kind: 'restored' }, omitName: true });
  });

  it('restores an exec action, leaving out what the model did not set', () => {
    expect(execAction('{"command": ["ls"], "working_directory": "/tmp"}')).toEqual({ action: { type: 'exec', command: ['ls'], env: {}, working_directory: '/tmp' } });
    expect(execAction('{"command": ["ls"], "env": {"A": "1"}, "timeout_ms": 5, "user": "me"}')).toEqual({
      action: { type: 'exec', command: ['ls'], env: { A: '1' }, timeout_ms: 5, user: 'me' },
    });
  });

  it.each(['{"command": "ls"}', '{"command": []}', '{"command": ["ls"], "env": {"A": 1}}', '{"command": ["ls"], "timeout_ms": 0}', '{"command": ["ls"], "user": 3}'])(
    'refuses %s',
    (args) => {
      const restored = handler.clientCalls.restore(args, { kind: 'local_shell_call', name: 'local_shell' }) as { error: string };
      expect(JSON.parse(restored.error).error.code).toBe('invalid_local_shell_call');
    },
  );

  it('replays the call, and an output naming its call by id (OpenAI) or call_id (the AI SDK)', () => {
    const action = { type: 'exec', command: ['ls'], env: {} };
    expect(handler.toModelItems({ type: 'local_shell_call', call_id: 'c', action }, history)).toEqual([
      { type: 'function_call', call_id: 'c', name: 'local_shell', arguments: '{"command":["ls"],"env":{},"working_directory":null,"timeout_ms":null,"user":null}' },
    ]);
    expect(handler.toModelItems({ type: 'local_shell_call_output', id: 'c', output: 'x' }, history)).toEqual([{ type: 'function_call_output', call_id: 'c', output: 'x' }]);
    expect(handler.toModelItems({ type: 'local_shell_call_output', call_id: 'd', output: 'y' }, history)).toEqual([{ type: 'function_call_output', call_id: 'd', output: 'y' }]);
  });
});
