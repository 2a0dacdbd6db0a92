import { CustomToolHandler } from '#tools/custom/custom.tool-handler.js';
import { FileSearchToolHandler } from '#tools/file-search/file-search.tool-handler.js';
import { FunctionToolHandler } from '#tools/function/function.tool-handler.js';
import { NamespaceToolHandler } from '#tools/namespace/namespace.tool-handler.js';
import type { ToolHandlerExplorer } from '../handlers/tool-handler.explorer.js';
import type { ModelItem, PublicItem } from '#tool-sdk/items.js';
import { ToolPreparationService } from '../registry/tool-preparation.service.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import { explorerWith, testConfig } from '../testing/fixtures.js';
import { ProbeExecutor, ProbeToolHandler } from '../testing/probe-tool.js';
import { HistoryTranslator, type ApprovalSlot } from './history-to-model.js';
import { outputText } from '#tool-sdk/helpers/output-text.js';
import { ReasoningTokenCodec } from '#state/reasoning/reasoning-token.codec.js';

let explorer: ToolHandlerExplorer;
let registry: ToolRegistry;

beforeAll(async () => {
  explorer = explorerWith(
    [new FunctionToolHandler(), new CustomToolHandler(), new NamespaceToolHandler(), new FileSearchToolHandler(), new ProbeToolHandler()],
    [new ProbeExecutor()],
  );
  registry = await new ToolPreparationService(explorer, testConfig()).prepare(
    [
      { type: 'function', name: 'run_shell' },
      { type: 'custom', name: 'apply_patch' },
      {
        type: 'namespace',
        name: 'files',
        tools: [
          { type: 'function', name: 'read' },
          { type: 'custom', name: 'write' },
        ],
      },
      { type: 'probe', name: 'lookup', server_label: 'srv' },
      { type: 'file_search', vector_store_ids: ['vs_1'] },
    ],
    { history: [], signal: new AbortController().signal, requestId: 'r' },
  );
});

function translate(items: PublicItem[], into: ModelItem[] = []): { into: ModelItem[]; approvals: ApprovalSlot[] } {
  const approvals: ApprovalSlot[] = [];
  new HistoryTranslator(registry, explorer).translate(items, into, approvals);
  return { into, approvals };
}

describe('HistoryTranslator', () => {
  it('passes messages with their role and content, without public-only fields', () => {
    const { into } = translate([
      { type: 'message', id: 'msg_1', status: 'completed', role: 'user', content: 'hi' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello', annotations: [] }], phase: 'final_answer' },
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'be brief' }] },
    ]);
    expect(into).toEqual([
      { type: 'message', role: 'user', content: 'hi' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello', annotations: [] }] },
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'be brief' }] },
    ]);
  });

  it('keeps plain function calls and their outputs as they are', () => {
    const { into } = translate([
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'run_shell', arguments: '{"cmd":"ls"}', status: 'completed' },
      { type: 'function_call_output', id: 'fco_1', call_id: 'call_1', output: 'a.txt' },
    ]);
    expect(into).toEqual([
      { type: 'function_call', call_id: 'call_1', name: 'run_shell', arguments: '{"cmd":"ls"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
    ]);
  });

  it('gives a call without arguments an empty argument string', () => {
    const { into } = translate([{ type: 'function_call', call_id: 'c', name: 'run_shell' } as PublicItem]);
    expect(into[0]).toMatchObject({ arguments: '' });
  });

  it('turns custom calls into function calls carrying the input as JSON, and their outputs into function outputs', () => {
    const { into } = translate([
      { type: 'custom_tool_call', call_id: 'call_c', name: 'apply_patch', input: 'line "1"\nline 2' },
      { type: 'custom_tool_call_output', call_id: 'call_c', output: 'applied' },
    ]);
    expect(into).toEqual([
      { type: 'function_call', call_id: 'call_c', name: 'apply_patch', arguments: JSON.stringify({ input: 'line "1"\nline 2' }) },
      { type: 'function_call_output', call_id: 'call_c', output: 'applied' },
    ]);
    expect(JSON.parse((into[0] as { arguments: string }).arguments)).toEqual({ input: 'line "1"\nline 2' });
  });

  it('flattens namespaced calls to the model-visible names the request declares', () => {
    const { into } = translate([
      { type: 'function_call', call_id: 'n1', name: 'read', namespace: 'files', arguments: '{}' },
      { type: 'custom_tool_call', call_id: 'n2', name: 'write', namespace: 'files', input: 'data' },
    ]);
    expect(into).toEqual([
      { type: 'function_call', call_id: 'n1', name: 'files__read', arguments: '{}' },
      { type: 'function_call', call_id: 'n2', name: 'files__write', arguments: '{"input":"data"}' },
    ]);
  });

  it('flattens a namespace this request no longer declares to the same stable name', () => {
    const { into } = translate([{ type: 'function_call', call_id: 'n1', name: 'run', namespace: 'old.ns', arguments: '{}' }]);
    expect(into[0]).toMatchObject({ name: 'old_ns__run' });
  });

  it('keeps content-part outputs with media whole, and reads text-only ones as text', () => {
    const parts = [
      { type: 'input_text', text: 'part 1, ' },
      { type: 'input_image', image_url: 'x' },
      { type: 'input_text', text: 'part 2' },
    ];
    const { into } = translate([
      { type: 'function_call_output', call_id: 'c', output: parts },
      { type: 'function_call_output', call_id: 'd', output: [parts[0], parts[2]] },
    ]);
    expect(into[0]).toEqual({ type: 'function_call_output', call_id: 'c', output: parts });
    expect(into[1]).toEqual({ type: 'function_call_output', call_id: 'd', output: 'part 1, part 2' });
    expect(outputText(null)).toBe('');
    expect(outputText({ a: 1 })).toBe('{"a":1}');
  });

  it('carries reasoning, with defaults for missing parts', () => {
    const { into } = translate([
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 's' }], content: [{ type: 'reasoning_text', text: 't' }], encrypted_content: 'enc' },
      { type: 'reasoning', summary: [] },
    ]);
    expect(into).toEqual([
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 's' }], content: [{ type: 'reasoning_text', text: 't' }], encrypted_content: 'enc' },
      { type: 'reasoning', summary: [], content: [], encrypted_content: null },
    ]);
  });

  it('opens reasoning the gateway sealed (the model sees what it wrote, not what the client kept); other values pass on', () => {
    const codec = new ReasoningTokenCodec('translator-test-key-0123');
    const wrote = { type: 'reasoning' as const, summary: [], content: [{ type: 'reasoning_text' as const, text: 'the whole working' }], encrypted_content: 'upstream-own' };
    const into: ModelItem[] = [];
    new HistoryTranslator(registry, explorer, codec).translate(
      [
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'shown' }], encrypted_content: codec.seal(wrote) },
        { type: 'reasoning', summary: [], encrypted_content: 'gAAAA-not-ours' },
      ],
      into,
    );
    expect(into).toEqual([wrote, { type: 'reasoning', summary: [], content: [], encrypted_content: 'gAAAA-not-ours' }]);
  });

  it('lets the owning tool module translate its own item types', () => {
    const { into } = translate([
      { type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['q'], results: [{ file_id: 'f', text: 'hit' }] },
      { type: 'probe_call', id: 'pr_1', status: 'completed', server_label: 'srv', name: 'lookup', arguments: '{"q":1}', output: 'found' },
    ]);
    expect(into).toEqual([
      { type: 'function_call', call_id: 'fs_1', name: 'file_search', arguments: '{"queries":["q"]}' },
      { type: 'function_call_output', call_id: 'fs_1', output: '[{"file_id":"f","text":"hit"}]' },
      // The module asked the registry for the current model-visible name of (probe, lookup, srv).
      { type: 'function_call', call_id: 'pr_1', name: 'srv__lookup', arguments: '{"q":1}' },
      { type: 'function_call_output', call_id: 'pr_1', output: 'found' },
    ]);
  });

  it('drops item types no module claims', () => {
    const { into } = translate([
      { type: 'message', role: 'user', content: 'a' },
      { type: 'mcp_list_tools', id: 'ml_1', server_label: 'x', tools: [] },
      { type: 'message', role: 'user', content: 'b' },
    ]);
    expect(into.map((i) => (i as { content: string }).content)).toEqual(['a', 'b']);
  });

  it('records approval responses as slots at their place in the transcript, adding no item', () => {
    const prior: ModelItem[] = [
      { type: 'message', role: 'user', content: 'earlier' },
      { type: 'function_call', call_id: 'mcpr_1', name: 'srv__lookup', arguments: '{}' },
      { type: 'function_call', call_id: 'mcpr_2', name: 'srv__lookup', arguments: '{}' },
    ];
    const { into, approvals } = translate(
      [
        { type: 'probe_approval_response', approval_request_id: 'mcpr_1', approve: true },
        { type: 'probe_approval_response', approval_request_id: 'mcpr_2', approve: false, reason: 'too risky' },
        { type: 'message', role: 'user', content: 'then summarise' },
        { type: 'probe_approval_response', approval_request_id: 'mcpr_3', approve: 'yes' },
      ],
      [...prior],
    );
    expect(into).toHaveLength(4);
    // Positions index the transcript being built, prior items included.
    // Each answer is read by the approval contract of the module that claims its type.
    expect(approvals.map(({ position, itemType, answer }) => ({ position, itemType, ...answer }))).toEqual([
      { position: 3, itemType: 'probe_approval_response', requestId: 'mcpr_1', approve: true, reason: null },
      { position: 3, itemType: 'probe_approval_response', requestId: 'mcpr_2', approve: false, reason: 'too risky' },
      // Only a literal `true` approves.
      { position: 4, itemType: 'probe_approval_response', requestId: 'mcpr_3', approve: false, reason: null },
    ]);
    expect(approvals.every((slot) => slot.handler.type === 'probe')).toBe(true);
  });

  it('keeps the order of mixed history', () => {
    const { into } = translate([
      { type: 'message', role: 'user', content: 'go' },
      { type: 'reasoning', summary: [] },
      { type: 'function_call', call_id: 'a', name: 'run_shell', arguments: '{}' },
      { type: 'custom_tool_call', call_id: 'b', name: 'apply_patch', input: 'x' },
      { type: 'function_call_output', call_id: 'a', output: '1' },
      { type: 'custom_tool_call_output', call_id: 'b', output: '2' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok', annotations: [] }] },
    ]);
    expect(into.map((i) => i.type)).toEqual(['message', 'reasoning', 'function_call', 'function_call', 'function_call_output', 'function_call_output', 'message']);
  });
});
