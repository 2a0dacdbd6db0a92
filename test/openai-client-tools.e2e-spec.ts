import { createOpenAI } from '@ai-sdk/openai';
import { Agent, OpenAIResponsesModel, applyPatchTool, computerTool, run, setTracingDisabled, shellTool } from '@openai/agents';
import { generateText, stepCountIs } from 'ai';
import type OpenAI from 'openai';
import { NapToolModule } from '#core/testing/nap-tool.module.js';
import { collect } from './support/fixtures.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * OpenAI's client-executed tool types (`shell`, `apply_patch`, `local_shell`,
 * `computer_use_preview`) through the official clients that build them: the
 * Agents SDK's `shellTool`, `applyPatchTool`, `computerTool` and the AI
 * SDK's `openai.tools.shell`, `.applyPatch`, `.localShell`. The simulated
 * model is scripted to call them; the clients run them and send the outputs back.
 */
setTracingDisabled(true);

const MODEL = 'sim-model';
/** A one-pixel PNG, the screenshot the computer below takes. */
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

describe('client-owned OpenAI tool types through the official clients', () => {
  let stack: GatewayStack;
  let client: OpenAI;
  beforeAll(async () => {
    stack = await startStack({ imports: [NapToolModule] });
    client = stack.openai;
  });
  afterAll(() => stack.close());

  const upstreamBodies = () => stack.simulator.requests.map((r) => r.body as any);
  const lastUpstream = () => upstreamBodies().at(-1);
  const outputsSent = (body: any) => (body.input as any[]).filter((i) => i.type === 'function_call_output');

  describe('@openai/agents', () => {
    it('shellTool: the shell_call reaches the shell, its per-command output reaches the model', async () => {
      const ran: unknown[] = [];
      const shell = shellTool({
        shell: {
          async run(action) {
            ran.push(action);
            return {
              output: action.commands.map((command, i) => ({ stdout: `out of ${command}`, stderr: i === 1 ? 'warn' : '', outcome: { type: 'exit' as const, exitCode: i } })),
            };
          },
        },
      });
      const agent = new Agent({ name: 'Operator', model: new OpenAIResponsesModel(client as any, MODEL), tools: [shell] });
      const result = await run(agent, 'Look around. [[call shell {"commands": ["ls", "pwd"], "timeout_ms": 5000}]]');
      expect(ran).toEqual([expect.objectContaining({ commands: ['ls', 'pwd'], timeoutMs: 5000 })]);
      expect(String(result.finalOutput)).toContain('out of pwd');
      // The model was offered a function and read each command's stdout, stderr and outcome.
      expect(
        upstreamBodies()
          .at(-2)
          .tools.map((t: any) => t.name),
      ).toEqual(['shell']);
      const [output] = outputsSent(lastUpstream());
      expect(JSON.parse(output.output)).toEqual([
        { stdout: 'out of ls', stderr: '', outcome: 'exit 0' },
        { stdout: 'out of pwd', stderr: 'warn', outcome: 'exit 1' },
      ]);
    });

    it('shellTool streaming: the streamed shell_call runs once and the answer streams after it', async () => {
      const ran: string[][] = [];
      const shell = shellTool({
        shell: { run: async (action) => (ran.push(action.commands), { output: [{ stdout: 'streamed-ok', stderr: '', outcome: { type: 'exit' as const, exitCode: 0 } }] }) },
      });
      const agent = new Agent({ name: 'Operator', model: new OpenAIResponsesModel(client as any, MODEL), tools: [shell] });
      const result = await run(agent, '[[call shell {"commands": ["uname -a"]}]]', { stream: true });
      const kinds: string[] = [];
      for await (const event of result) if (event.type === 'run_item_stream_event') kinds.push(event.name);
      await result.completed;
      expect(ran).toEqual([['uname -a']]);
      expect(kinds.indexOf('tool_called')).toBeGreaterThanOrEqual(0);
      expect(kinds.indexOf('tool_output')).toBeGreaterThan(kinds.indexOf('tool_called'));
      expect(String(result.finalOutput)).toContain('streamed-ok');
    });

    it('applyPatchTool: the operation reaches the editor and the result reaches the model', async () => {
      const applied: unknown[] = [];
      const patch = applyPatchTool({
        editor: {
          async createFile(operation) {
            applied.push(operation);
            return { status: 'completed', output: `created ${operation.path}` };
          },
          async updateFile() {
            return { status: 'failed', output: 'unexpected' };
          },
          async deleteFile() {
            return { status: 'failed', output: 'unexpected' };
          },
        },
      });
      const agent = new Agent({ name: 'Editor', model: new OpenAIResponsesModel(client as any, MODEL), tools: [patch] });
      const operation = { type: 'create_file', path: 'notes/a.txt', diff: '+hello\n+world\n' };
      const result = await run(agent, `Write it. [[call apply_patch ${JSON.stringify({ operation })}]]`);
      expect(applied).toEqual([expect.objectContaining(operation)]);
      expect(String(result.finalOutput)).toContain('created notes/a.txt');
    });

    it('computerTool (GA, any other model): a batch of actions reaches the computer in order', async () => {
      const done: string[] = [];
      const computer = computerTool({
        computer: {
          screenshot: () => PIXEL,
          click: (x: number, y: number) => void done.push(`click ${x},${y}`),
          doubleClick: () => undefined,
          scroll: () => undefined,
          type: (text: string) => void done.push(`type ${text}`),
          wait: () => undefined,
          move: () => undefined,
          keypress: (keys: string[]) => void done.push(`keys ${keys.join('+')}`),
          drag: () => undefined,
        },
      });
      const agent = new Agent({ name: 'Typist', model: new OpenAIResponsesModel(client as any, MODEL), tools: [computer] });
      const actions = [
        { type: 'click', x: 5, y: 6, button: 'left' },
        { type: 'type', text: 'hello' },
        { type: 'keypress', keys: ['ENTER'] },
      ];
      await run(agent, `Fill it in. [[call computer ${JSON.stringify({ actions })}]]`);
      expect(done).toEqual(['click 5,6', 'type hello', 'keys ENTER']);
      expect(upstreamBodies().at(-2).tools[0]).toMatchObject({ name: 'computer', parameters: { required: ['actions'] } });
      expect(outputsSent(lastUpstream())[0].output[1]).toEqual({ type: 'input_image', detail: 'auto', image_url: `data:image/png;base64,${PIXEL}` });
    });

    it('computerTool (preview): the action reaches the computer, the screenshot reaches the model as an image', async () => {
      const clicks: unknown[] = [];
      const computer = computerTool({
        computer: {
          environment: 'browser',
          dimensions: [1024, 768],
          screenshot: () => PIXEL,
          click: (x: number, y: number, button: string) => void clicks.push({ x, y, button }),
          doubleClick: () => undefined,
          scroll: () => undefined,
          type: () => undefined,
          wait: () => undefined,
          move: () => undefined,
          keypress: () => undefined,
          drag: () => undefined,
        },
      });
      // A preview model name makes the SDK declare `computer_use_preview` with the display.
      const agent = new Agent({ name: 'Clicker', model: new OpenAIResponsesModel(client as any, 'computer-use-preview'), tools: [computer] });
      await run(agent, 'Press it. [[call computer {"action": {"type": "click", "x": 10, "y": 20, "button": "left"}}]]');
      expect(clicks).toEqual([{ x: 10, y: 20, button: 'left' }]);
      const declared = upstreamBodies().at(-2).tools[0];
      expect(declared.name).toBe('computer');
      expect(declared.description).toContain('1024x768');
      const [output] = outputsSent(lastUpstream());
      expect(output.output).toEqual([
        { type: 'input_text', text: 'Screenshot after the action:' },
        { type: 'input_image', detail: 'auto', image_url: `data:image/png;base64,${PIXEL}` },
      ]);
    });
  });

  describe('AI SDK helpers', () => {
    const openai = () => createOpenAI({ baseURL: stack.url, apiKey: 'test' });

    it('openai.tools.shell, .applyPatch and .localShell run client-side and their outputs come back (stored calls by reference)', async () => {
      const provider = openai();
      const seen: string[] = [];
      const tools = {
        shell: provider.tools.shell({
          execute: async ({ action }: any) => (
            seen.push(`shell:${action.commands.join('&&')}`),
            { output: [{ stdout: 'shell-ok', stderr: '', outcome: { type: 'exit', exitCode: 0 } }] }
          ),
        }),
        apply_patch: provider.tools.applyPatch({
          execute: async ({ operation }: any) => (seen.push(`patch:${operation.type}:${operation.path}`), { status: 'completed', output: 'patch-ok' }),
        }),
        local_shell: provider.tools.localShell({
          // The SDK's input schema is camelCase while it passes the wire's snake_case action through, so it sees `command` and `env` only.
          execute: async ({ action }: any) => (seen.push(`local:${action.command.join(' ')}`), { output: 'local-ok' }),
        }),
      } as any;
      const prompt =
        'Do all three. [[call shell {"commands": ["make"]}]] [[call apply_patch {"operation": {"type": "delete_file", "path": "old.txt"}}]] ' +
        '[[call local_shell {"command": ["git", "status"], "working_directory": "/repo"}]]';
      const result = await generateText({ model: provider.responses(MODEL), prompt, tools, stopWhen: stepCountIs(3) });
      expect(seen).toEqual(['shell:make', 'patch:delete_file:old.txt', 'local:git status']);
      // The stored calls went back as item references; the gateway replayed them, and the model read all three outputs.
      const sent = JSON.stringify(lastUpstream().input);
      for (const text of ['shell-ok', 'patch-ok', 'local-ok']) expect(sent).toContain(text);
      expect(result.text).toContain('local-ok');
    });
  });

  describe('the wire, with the openai client', () => {
    const shellTools = [{ type: 'shell', environment: { type: 'local' } } as any];

    it('streams shell_call with its command events, in order', async () => {
      const events = await collect(await client.responses.create({ model: MODEL, input: '[[call shell {"commands": ["echo a", "echo b"]}]]', tools: shellTools, stream: true }));
      const types = events.map((e: any) => e.type).filter((t: string) => !t.startsWith('response.reasoning'));
      const at = types.indexOf('response.output_item.added');
      expect(types.slice(at, at + 8)).toEqual([
        'response.output_item.added',
        'response.shell_call_command.added',
        'response.shell_call_command.delta',
        'response.shell_call_command.done',
        'response.shell_call_command.added',
        'response.shell_call_command.delta',
        'response.shell_call_command.done',
        'response.output_item.done',
      ]);
      const done = events.find((e: any) => e.type === 'response.output_item.done').item;
      expect(done).toMatchObject({
        type: 'shell_call',
        status: 'completed',
        action: { commands: ['echo a', 'echo b'], timeout_ms: null, max_output_length: null },
        environment: { type: 'local' },
      });
      expect(done.id).toMatch(/^sh_/);
      expect(events.filter((e: any) => e.type === 'response.shell_call_command.done').map((e: any) => e.command)).toEqual(['echo a', 'echo b']);
      expect(events.some((e: any) => e.type.startsWith('response.function_call_arguments'))).toBe(false);
    });

    it('an apply_patch diff that does not parse goes back to the model, not to the client; its correction does', async () => {
      const bad = { operation: { type: 'update_file', path: 'a.py', diff: '*** Begin Patch\n+x = 1' } };
      const good = { operation: { type: 'update_file', path: 'a.py', diff: '@@ def f():\n-    return 0\n+    return 1' } };
      const response = await client.responses.create({
        model: MODEL,
        input: `Fix it. [[call apply_patch ${JSON.stringify(bad)}]] [[call@2 apply_patch ${JSON.stringify(good)}]]`,
        tools: [{ type: 'apply_patch' } as any],
      });
      expect(response.output.filter((i) => i.type !== 'reasoning')).toEqual([
        expect.objectContaining({ type: 'apply_patch_call', status: 'completed', operation: good.operation }),
      ]);
      // The second round read why the first patch was refused.
      const [refusal] = outputsSent(lastUpstream());
      expect(JSON.parse(refusal.output).error).toMatchObject({ code: 'invalid_patch' });
      expect(JSON.parse(refusal.output).error.message).toContain('Line 1');
    });

    it('local_shell: the exec action goes back, and its output is replayed from the stored response', async () => {
      const first = await client.responses.create({
        model: MODEL,
        input: '[[call local_shell {"command": ["ls", "-la"], "env": {"LANG": "C"}, "timeout_ms": 900}]]',
        tools: [{ type: 'local_shell' } as any],
      });
      const call = first.output.find((i) => i.type === 'local_shell_call') as any;
      expect(call).toMatchObject({ status: 'completed', action: { type: 'exec', command: ['ls', '-la'], env: { LANG: 'C' }, timeout_ms: 900 } });
      expect(Object.keys(call.action)).toEqual(['type', 'command', 'env', 'timeout_ms']);
      const second = await client.responses.create({
        model: MODEL,
        previous_response_id: first.id,
        input: [{ type: 'local_shell_call_output', id: call.call_id, output: 'total 0' } as any],
        tools: [{ type: 'local_shell' } as any],
      });
      expect(second.output_text).toContain('total 0');
      const history = lastUpstream().input as any[];
      expect(history.find((i) => i.type === 'function_call')).toMatchObject({ call_id: call.call_id, name: 'local_shell' });
    });

    it('computer_call_output is replayed from the stored response with its screenshot', async () => {
      const tools = [{ type: 'computer_use_preview', display_width: 800, display_height: 600, environment: 'linux' }] as any;
      const first = await client.responses.create({ model: MODEL, input: '[[call computer {"action": {"type": "type", "text": "hi"}}]]', tools });
      const call = first.output.find((i) => i.type === 'computer_call') as any;
      expect(call).toMatchObject({ action: { type: 'type', text: 'hi' }, pending_safety_checks: [] });
      const image_url = `data:image/png;base64,${PIXEL}`;
      await client.responses.create({
        model: MODEL,
        previous_response_id: first.id,
        tools,
        input: [{ type: 'computer_call_output', call_id: call.call_id, output: { type: 'computer_screenshot', image_url }, acknowledged_safety_checks: [] } as any],
      });
      const history = lastUpstream().input as any[];
      // A stored response keeps the model's own call as it wrote it.
      const replayed = history.find((i) => i.type === 'function_call');
      expect(replayed).toMatchObject({ call_id: call.call_id, name: 'computer' });
      expect(JSON.parse(replayed.arguments)).toEqual({ action: { type: 'type', text: 'hi' } });
      expect(outputsSent(lastUpstream())[0].output[1]).toEqual({ type: 'input_image', detail: 'auto', image_url });
    });

    it.each([
      [{ type: 'shell' }, 'shell_call'],
      [{ type: 'apply_patch' }, 'apply_patch_call'],
      [{ type: 'local_shell' }, 'local_shell_call'],
      [{ type: 'computer_use_preview' }, 'computer_call'],
    ])('tool_choice %j forces its tool among others', async (choice, itemType) => {
      const tools = [
        { type: 'function', name: 'other', parameters: { type: 'object', properties: {} } },
        { type: 'shell' },
        { type: 'apply_patch' },
        { type: 'local_shell' },
        { type: 'computer_use_preview', display_width: 800, display_height: 600, environment: 'linux' },
      ] as any;
      const before = stack.simulator.requests.length;
      const response = await client.responses.create({ model: MODEL, input: 'Go.', tools, tool_choice: choice as any });
      const forced = upstreamBodies()[before].tool_choice;
      expect(forced).toEqual({ type: 'function', name: itemType === 'computer_call' ? 'computer' : choice.type });
      // The simulator fills the schema it was forced to: what comes back is this type's item, or the model's error result for a fill the type refuses.
      const refusedFill = stack.simulator.requests.length > before + 1 && outputsSent(lastUpstream()).some((o: any) => o.output.includes('"error"'));
      expect(response.output.some((i: any) => i.type === itemType) || refusedFill).toBe(true);
    });

    it('a mixed turn runs the gateway tool and hands the client calls back together; parallel_tool_calls reaches the model', async () => {
      const response = await client.responses.create({
        model: MODEL,
        input: '[[call nap {"ms": 1}]] [[call shell {"commands": ["date"]}]] [[call computer {"action": {"type": "screenshot"}}]]',
        tools: [{ type: 'nap', name: 'nap' }, { type: 'shell' }, { type: 'computer_use_preview', display_width: 800, display_height: 600, environment: 'linux' }] as any,
        parallel_tool_calls: false,
      });
      expect(response.output.filter((i) => i.type !== 'reasoning').map((i) => [i.type, (i as any).status])).toEqual([
        ['nap_call', 'completed'],
        ['shell_call', 'completed'],
        ['computer_call', 'completed'],
      ]);
      expect(response.output.find((i) => i.type === 'computer_call')).toMatchObject({ action: { type: 'screenshot' }, pending_safety_checks: [] });
      expect(lastUpstream().parallel_tool_calls).toBe(false);
      expect(stack.simulator.requests.length).toBeGreaterThan(0);
    });

    it('declarations the gateway cannot honour are a 400 naming the field', async () => {
      const hosted = await client.responses
        .create({ model: MODEL, input: 'x', tools: [{ type: 'shell', environment: { type: 'container_auto' } } as any] })
        .catch((err: unknown) => err as any);
      expect(hosted).toMatchObject({ status: 400, param: 'tools[0].environment.type' });
      const display = await client.responses
        .create({ model: MODEL, input: 'x', tools: [{ type: 'computer_use_preview', display_width: 0, display_height: 600, environment: 'linux' } as any] })
        .catch((err: unknown) => err as any);
      expect(display).toMatchObject({ status: 400, param: 'tools[0].display_width' });
      // An output answers a call the conversation holds, by `call_id`.
      const orphan = await client.responses
        .create({ model: MODEL, input: [{ type: 'shell_call_output', call_id: 'call_nowhere', output: [] } as any], tools: [{ type: 'shell' } as any] })
        .catch((err: unknown) => err as any);
      expect(orphan).toMatchObject({ status: 400, param: 'input[0].call_id' });
    });
  });
});
