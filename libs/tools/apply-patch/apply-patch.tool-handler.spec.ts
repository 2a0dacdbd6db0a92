import { ApplyPatchToolHandler, patchOperation } from './apply-patch.tool-handler.js';
import { v4aSyntaxError } from './v4a-diff.js';

const handler = new ApplyPatchToolHandler();
const shape = { kind: 'apply_patch_call', name: 'apply_patch' };
const history = { modelNameFor: () => undefined, clientCallName: () => undefined };

describe('V4A diff syntax', () => {
  it('accepts content lines for create_file, with or without a final newline', () => {
    expect(v4aSyntaxError('create_file', '+a\n+b')).toBeNull();
    expect(v4aSyntaxError('create_file', '+a\n+\n')).toBeNull();
  });

  it('refuses a create_file line without "+", naming the line', () => {
    expect(v4aSyntaxError('create_file', '+a\nb')).toMatch(/^Line 2 /);
  });

  it('accepts update hunks with anchors, context, removals, additions and an end-of-file marker', () => {
    expect(v4aSyntaxError('update_file', '@@ class A:\n def f():\n-    return 0\n+    return 1\n\n@@\n-x\n*** End of File')).toBeNull();
  });

  it.each([
    ['*** Begin Patch\n+x', /Line 1 is a patch header/],
    ['@@\n x\n?y', /Line 3 must start with/],
    ['@@\n x\n y', /adds and removes nothing/],
  ])('refuses %j', (diff, message) => {
    expect(v4aSyntaxError('update_file', diff)).toMatch(message);
  });
});

describe('ApplyPatchToolHandler', () => {
  it('is client-owned and restores calls to apply_patch_call', () => {
    const [tool] = handler.normalize({}, undefined, { takenNames: new Set() });
    expect(handler.gatewayOwned).toBe(false);
    expect(tool.clientShape).toEqual({ kind: 'apply_patch_call', name: 'apply_patch', relay: { kind: 'restored' }, idPrefix: 'apc', omitName: true });
    expect(handler.publicDeclaration()).toEqual({ type: 'apply_patch' });
  });

  it('restores each operation with only its own fields', () => {
    expect(handler.clientCalls.restore('{"operation": {"type": "delete_file", "path": "a", "diff": "+x"}}', shape)).toEqual({
      fields: { operation: { type: 'delete_file', path: 'a' } },
    });
    expect(handler.clientCalls.restore('{"operation": {"type": "create_file", "path": "a", "diff": "+x"}}', shape)).toEqual({
      fields: { operation: { type: 'create_file', path: 'a', diff: '+x' } },
    });
  });

  it.each([
    ['{"operation": {"type": "rename_file", "path": "a"}}', /operation.type/],
    ['{"operation": {"type": "update_file", "path": ""}}', /operation.path/],
    ['{"operation": {"type": "update_file", "path": "a"}}', /operation.diff is required/],
    ['{"operation": {"type": "update_file", "path": "a", "diff": "x"}}', /not a valid V4A diff/],
    ['{}', /"operation" object/],
  ])('refuses %s with a text the model can act on', (args, message) => {
    const parsed = patchOperation(args);
    expect((parsed as { error: string }).error).toMatch(message);
    const restored = handler.clientCalls.restore(args, shape) as { error: string };
    expect(JSON.parse(restored.error).error).toMatchObject({ code: 'invalid_patch' });
  });

  it('replays the call as the function the model called and the output with its status', () => {
    const operation = { type: 'update_file', path: 'a', diff: '-x\n+y' };
    expect(handler.toModelItems({ type: 'apply_patch_call', call_id: 'c', operation }, history)).toEqual([
      { type: 'function_call', call_id: 'c', name: 'apply_patch', arguments: JSON.stringify({ operation }) },
    ]);
    expect(handler.toModelItems({ type: 'apply_patch_call_output', call_id: 'c', status: 'failed', output: 'no such file' }, history)).toEqual([
      { type: 'function_call_output', call_id: 'c', output: '{"status":"failed","output":"no such file"}' },
    ]);
  });
});
