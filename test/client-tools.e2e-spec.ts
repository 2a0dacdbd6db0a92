import { jest } from '@jest/globals';
import type OpenAI from 'openai';
import { OpenResponsesValidator } from './support/openresponses-validator.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { collect } from './support/fixtures.js';
import { Injectable, Module } from '@nestjs/common';
import { ToolHandlerProvider } from '#tool-sdk/decorators.js';
import type { NormalizedTool, ToolHandler } from '#tool-sdk/contract/index.js';
import { GatewayScheduler } from '#core/loop/gateway-scheduler.service.js';

/**
 * A gateway-owned type whose module brings no executor (every built-in
 * hosted type now runs): routed, never offered to the model.
 */
@Injectable()
@ToolHandlerProvider({ type: 'placeholder' })
class PlaceholderHandler implements ToolHandler<Record<string, never>> {
  readonly type = 'placeholder';
  readonly gatewayOwned = true;
  validate(): Record<string, never> {
    return {};
  }
  normalize(): NormalizedTool[] {
    return [{ fn: { type: 'function', name: 'placeholder', parameters: { type: 'object', properties: {} } }, toolName: 'placeholder', hidden: true }];
  }
}

@Module({ providers: [PlaceholderHandler] })
class PlaceholderToolModule {}

const validator = new OpenResponsesValidator();

const applyPatch = {
  type: 'custom',
  name: 'apply_patch',
  description: 'Apply a patch to the working tree.',
  format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /(.|\\n)*/ "*** End Patch"' },
} as any;

const shellNamespace = {
  type: 'namespace',
  name: 'mcp__shell',
  description: 'Shell tools',
  tools: [
    { type: 'function', name: 'run', description: 'Run a command', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
    { type: 'custom', name: 'script', description: 'Run a script' },
  ],
} as any;

describe.each(['responses', 'chat'] as const)('client-owned custom and namespace tools (%s dialect)', (dialect) => {
  let stack: GatewayStack;
  let client: OpenAI;
  beforeAll(async () => {
    stack = await startStack({ dialect, imports: [PlaceholderToolModule] });
    client = stack.openai;
  });
  afterAll(() => stack.close());

  const lastUpstreamBody = () => stack.simulator.requests[stack.simulator.requests.length - 1].body as any;

  it('custom tool: call restored to custom_tool_call, output sent back, final answer', async () => {
    const patch = '*** Begin Patch\n*** Add File: a.txt\n+hello "world"\n*** End Patch';
    const first = await client.responses.create({
      model: 'm',
      input: `Patch it. [[call apply_patch ${JSON.stringify({ input: patch })}]]`,
      tools: [applyPatch],
    });
    validator.assertResponse(first);
    const call = first.output.find((i) => i.type === 'custom_tool_call') as any;
    expect(call).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: patch, status: 'completed' });
    expect(call.id).toMatch(/^ctc_/);
    // The model saw a function with one string parameter and the grammar in its description.
    const fnTool = (dialect === 'chat' ? lastUpstreamBody().tools.map((t: any) => t.function) : lastUpstreamBody().tools)[0];
    expect(fnTool.parameters.required).toEqual(['input']);
    expect(fnTool.description).toContain('*** Begin Patch');

    const second = await client.responses.create({
      model: 'm',
      tools: [applyPatch],
      input: [
        { role: 'user', content: `Patch it. [[call apply_patch ${JSON.stringify({ input: patch })}]]` },
        call,
        { type: 'custom_tool_call_output', call_id: call.call_id, output: 'Done: 1 file added' },
      ],
    });
    validator.assertResponse(second);
    expect(second.output_text).toContain('Done: 1 file added');
    // History went upstream as a function call with the input wrapped in JSON.
    const history = dialect === 'chat' ? lastUpstreamBody().messages : lastUpstreamBody().input;
    expect(JSON.stringify(history)).toContain(JSON.stringify(JSON.stringify({ input: patch })).slice(1, 30));
  });

  it('custom tool streams custom_tool_call_input deltas that add up to the input', async () => {
    const events = await collect(
      await client.responses.create({
        model: 'm',
        input: `[[call apply_patch ${JSON.stringify({ input: 'line one\nline "two"\n\u00e9t\u00e9' })}]]`,
        tools: [applyPatch],
        stream: true,
      }),
    );
    events.forEach((e) => validator.assertEvent(e));
    const deltas = events.filter((e) => e.type === 'response.custom_tool_call_input.delta');
    const done = events.find((e) => e.type === 'response.custom_tool_call_input.done');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e.delta).join('')).toBe('line one\nline "two"\n\u00e9t\u00e9');
    expect(done.input).toBe('line one\nline "two"\n\u00e9t\u00e9');
    expect(events.some((e) => e.type.startsWith('response.function_call_arguments'))).toBe(false);
  });

  it('namespace: members flattened for the model, calls restored to {namespace, name}, round trip', async () => {
    const first = await client.responses.create({
      model: 'm',
      input: 'List files. [[call mcp__shell__run {"cmd": "ls"}]]',
      tools: [shellNamespace],
    });
    validator.assertResponse(first);
    const call = first.output.find((i) => i.type === 'function_call') as any;
    expect(call).toMatchObject({ type: 'function_call', name: 'run', namespace: 'mcp__shell', arguments: '{"cmd": "ls"}' });
    const offered = (dialect === 'chat' ? lastUpstreamBody().tools.map((t: any) => t.function) : lastUpstreamBody().tools).map((t: any) => t.name);
    expect(offered).toEqual(['mcp__shell__run', 'mcp__shell__script']);

    const second = await client.responses.create({
      model: 'm',
      tools: [shellNamespace],
      input: [
        { role: 'user', content: 'List files. [[call mcp__shell__run {"cmd": "ls"}]]' },
        call,
        { type: 'function_call_output', call_id: call.call_id, output: 'a.txt b.txt' },
      ],
    });
    expect(second.output_text).toContain('a.txt b.txt');
    // The namespaced call in history was rewritten to the flattened name on the way in.
    expect(JSON.stringify(dialect === 'chat' ? lastUpstreamBody().messages : lastUpstreamBody().input)).toContain('mcp__shell__run');
  });

  it('namespace custom member comes back as custom_tool_call with its namespace', async () => {
    const response = await client.responses.create({
      model: 'm',
      input: '[[call mcp__shell__script {"input": "echo hi"}]]',
      tools: [shellNamespace],
    });
    expect(response.output.find((i) => i.type === 'custom_tool_call')).toMatchObject({ name: 'script', namespace: 'mcp__shell', input: 'echo hi' });
  });

  it('tool_choice forces a namespaced member and a custom tool by their public names', async () => {
    await client.responses.create({ model: 'm', input: 'go', tools: [shellNamespace], tool_choice: { type: 'function', name: 'run' } as any });
    const forced = lastUpstreamBody().tool_choice;
    expect(dialect === 'chat' ? forced.function.name : forced.name).toBe('mcp__shell__run');
    await client.responses.create({ model: 'm', input: 'go', tools: [applyPatch], tool_choice: { type: 'custom', name: 'apply_patch' } as any });
    const forcedCustom = lastUpstreamBody().tool_choice;
    expect(dialect === 'chat' ? forcedCustom.function.name : forcedCustom.name).toBe('apply_patch');
  });

  it('a namespace member that flattens onto a declared function name is a 400', async () => {
    await expect(
      client.responses.create({
        model: 'm',
        input: 'x',
        tools: [{ type: 'function', name: 'mcp__shell__run', parameters: {} } as any, shellNamespace],
      }),
    ).rejects.toMatchObject({ status: 400, error: { code: 'duplicate_tool_name' } });
  });

  it('a call to a gateway-owned type without an executor yields an error result and a failed item, never a dropped call', async () => {
    const response = await client.responses.create({
      model: 'm',
      input: '[[call placeholder {"x": 1}]]',
      tools: [{ type: 'placeholder' } as any],
    });
    const item = response.output.find((i) => (i.type as string) === 'placeholder_call') as any;
    expect(item).toMatchObject({ status: 'failed' });
    expect(response.output_text).toContain('tool_not_available');
    // Not offered to the model: the type has no model-facing implementation here.
    expect(stack.simulator.requests.slice(-1)[0].body).not.toHaveProperty('tools');
  });
  it("a round whose tools are all the client's sets up no scheduler; one with a gateway tool does", async () => {
    const scheduler = stack.app.get(GatewayScheduler);
    const schedule = jest.spyOn(scheduler, 'scheduleAmong');
    try {
      const functions = Array.from({ length: 100 }, (_, i) => ({ type: 'function', name: `fn_${i}`, parameters: { type: 'object', properties: {} } }) as any);
      const handedBack = await client.responses.create({ model: 'm', input: 'Call. [[call fn_42 {}]]', tools: [...functions, applyPatch, shellNamespace] });
      expect(handedBack.output.find((i) => i.type === 'function_call')).toMatchObject({ name: 'fn_42', arguments: '{}', status: 'completed' });
      const streamed = await collect(await client.responses.create({ model: 'm', input: 'Call. [[call fn_7 {}]]', tools: functions, stream: true }));
      expect(streamed.map((e: any) => e.type).at(-1)).toBe('response.completed');
      expect(schedule).not.toHaveBeenCalled();
      // The same request with one gateway-owned tool besides: its calls go through the scheduler.
      const ran = await client.responses.create({ model: 'm', input: '[[call placeholder {}]]', tools: [...functions, { type: 'placeholder' } as any] });
      expect(ran.output.find((i) => (i.type as string) === 'placeholder_call')).toMatchObject({ status: 'failed' });
      expect(schedule).toHaveBeenCalled();
    } finally {
      schedule.mockRestore();
    }
  });
});
