import { simpleApprovalToModelItems, simpleApprovals } from './call-items.js';

const call = { callId: 'call_1', itemId: 'calc_1', modelName: 'calc__add', toolName: 'add', arguments: '{"a":1}' };

describe('simpleApprovals', () => {
  it('issues request ids in the prefix it is given, whole', () => {
    const approvals = simpleApprovals<unknown>('calc', { requires: () => true, idPrefix: 'calcr' });
    const item = approvals.requestItem(call, {});
    expect(item).toMatchObject({ type: 'calc_approval_request', name: 'add', arguments: '{"a":1}' });
    expect(String(item.id)).toMatch(/^calcr_[A-Za-z0-9]+$/);
  });
});

describe('simpleApprovalToModelItems', () => {
  const request = { type: 'calc_approval_request', id: 'calcr_1', name: 'add', arguments: '{"a":1}' };

  it('names the call as HistoryContext.modelNameFor answers when the tool is declared', () => {
    expect(simpleApprovalToModelItems(request, 'calc__add')).toEqual([{ type: 'function_call', call_id: 'calcr_1', name: 'calc__add', arguments: '{"a":1}' }]);
  });

  it("takes modelNameFor's undefined (the tool is no longer declared) and keeps the item's own name", () => {
    const modelNameFor = (_name: string): string | undefined => undefined;
    expect(simpleApprovalToModelItems(request, modelNameFor('add'))).toEqual([{ type: 'function_call', call_id: 'calcr_1', name: 'add', arguments: '{"a":1}' }]);
  });

  it('completes an approved call with its output, and leaves other items to the caller', () => {
    expect(simpleApprovalToModelItems({ type: 'calc_call', id: 'calc_1', approval_request_id: 'calcr_1', output: '2' }, undefined)).toEqual([
      { type: 'function_call_output', call_id: 'calcr_1', output: '2' },
    ]);
    expect(simpleApprovalToModelItems({ type: 'calc_call', id: 'calc_2', output: '3' }, undefined)).toBeNull();
  });
});
