import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { RecordingProxy } from './support/recording-proxy.js';
import { agentMessages, collectRun, type CodexRun } from './support/codex/codex-cli.js';
import { CLI_KILL_MS, CLI_TEST_MS } from './support/cli-run-limits.js';

/**
 * `switchyard codex …` (the real entry point, apps/gateway/src/main.ts) runs
 * the installed Codex CLI against a gateway in front of the simulated
 * upstream. Codex reads the gateway's catalog as its own: no fallback model
 * metadata, and the request it sends declares apply_patch, which it applies
 * when the model calls it (on both upstream dialects).
 */
const REGISTER = fileURLToPath(new URL('./support/process/ts-register.mjs', import.meta.url));
const MAIN = fileURLToPath(new URL('../apps/gateway/src/main.ts', import.meta.url));
const KEY = 'codex-launcher-key-0123456789';
const FALLBACK_WARNING = /Model metadata for .* not found/;

// Codex's patch grammar: one file added, one updated in place.
const PATCH = [
  '*** Begin Patch',
  '*** Add File: greeting.txt',
  '+hello from apply_patch',
  '*** Update File: notes.txt',
  '@@',
  ' first line',
  '-old second line',
  '+new second line',
  '*** End Patch',
].join('\n');

/** Runs a prompt whose model answer is an apply_patch call with PATCH, then "patched"; checks the files it leaves. */
async function runPatch(workdir: string, exec: (prompt: string) => Promise<CodexRun>): Promise<CodexRun> {
  writeFileSync(join(workdir, 'notes.txt'), 'first line\nold second line\n');
  const run = await exec(`Edit the files. [[call apply_patch ${JSON.stringify({ input: PATCH })}]] [[say patched]]`);
  expect(run.code).toBe(0);
  expect(agentMessages(run)).toEqual(['patched']);
  expect(readFileSync(join(workdir, 'greeting.txt'), 'utf8')).toBe('hello from apply_patch\n');
  expect(readFileSync(join(workdir, 'notes.txt'), 'utf8')).toBe('first line\nnew second line\n');
  return run;
}

/** What Codex put on the wire (through a recording pass-through) and reported: its freeform tool, the custom call answered, the change applied. */
function expectCodexPatched(run: CodexRun, fromCodex: any[]): void {
  expect(fromCodex).toHaveLength(2);
  expect(fromCodex[0].tools).toContainEqual(expect.objectContaining({ type: 'custom', name: 'apply_patch', format: expect.objectContaining({ type: 'grammar' }) }));
  const customCall = fromCodex[1].input.find((i: any) => i.type === 'custom_tool_call');
  expect(customCall).toMatchObject({ name: 'apply_patch', input: PATCH });
  expect(fromCodex[1].input).toContainEqual(expect.objectContaining({ type: 'custom_tool_call_output', call_id: customCall.call_id }));
  const change = run.events.find((e) => e.type === 'item.completed' && e.item?.type === 'file_change')?.item;
  expect(change).toMatchObject({ status: 'completed' });
  expect(change.changes.map((c: any) => [c.path.split('/').pop(), c.kind]).sort()).toEqual([
    ['greeting.txt', 'add'],
    ['notes.txt', 'update'],
  ]);
}

/** The tool output the model reads next: apply_patch's own summary of what it changed. */
function expectPatchReport(text: string): void {
  expect(text).toMatch(/A greeting\.txt/);
  expect(text).toMatch(/M notes\.txt/);
}

describe('switchyard codex (the launcher)', () => {
  let stack: GatewayStack;
  let proxy: RecordingProxy;
  let dir: string;
  let workdir: string;

  beforeAll(async () => {
    stack = await startStack({
      simulator: { reasoning: true },
      config: {
        auth: { apiKeys: [KEY] },
        models: {
          coder: { upstreamModel: 'switchyard-sim', contextWindow: 32768, maxOutputTokens: 4096, inputModalities: ['text', 'image'], reasoning: true },
          // Listed efforts (the gateway's names, which Codex also knows).
          thinker: { upstreamModel: 'switchyard-sim', contextWindow: 16384, reasoning: ['none', 'low', 'high'] },
        },
      },
    });
    proxy = await RecordingProxy.start(stack.url);
    dir = mkdtempSync(join(tmpdir(), 'switchyard-codex-launcher-'));
    workdir = join(dir, 'work');
    mkdirSync(workdir);
  });
  afterAll(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await proxy?.close();
    await stack?.close();
  });

  function launch(args: string[], env: Record<string, string> = {}): Promise<CodexRun> {
    const child = spawn(process.execPath, ['--import', REGISTER, MAIN, 'codex', ...args], {
      env: { PATH: process.env.PATH, HOME: dir, SWITCHYARD_URL: stack.url, SWITCHYARD_API_KEY: KEY, RUST_LOG: 'error', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return collectRun(child, CLI_KILL_MS);
  }
  const exec = (prompt: string, extra: string[] = [], env: Record<string, string> = {}) =>
    launch(['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-C', workdir, ...extra, '--', prompt], env);

  it(
    'runs a prompt on the catalog model with its metadata: no fallback warning, apply_patch declared',
    async () => {
      const before = stack.simulator.requests.length;
      const run = await exec('Say it. [[say launched-ok]]');
      expect(run.stderr + run.stdout).not.toMatch(FALLBACK_WARNING);
      expect(run.code).toBe(0);
      expect(agentMessages(run)).toEqual(['launched-ok']);
      const sent = stack.simulator.requests.slice(before).map((r) => r.body as any);
      expect(sent).toHaveLength(1);
      const toolNames = sent[0].tools.map((t: any) => t.name ?? t.function?.name);
      expect(toolNames).toContain('apply_patch');
    },
    CLI_TEST_MS,
  );

  it(
    'applies the model’s apply_patch call: the work dir holds the patched files, and the next request carries the tool’s output',
    async () => {
      const [before, sentBefore] = [stack.simulator.requests.length, proxy.responses.length];
      const run = await runPatch(workdir, (prompt) => exec(prompt, [], { SWITCHYARD_URL: proxy.url }));
      expectCodexPatched(run, proxy.responses.slice(sentBefore));

      const sent = stack.simulator.requests.slice(before).map((r) => r.body as any);
      expect(sent).toHaveLength(2);
      // The model saw apply_patch as the gateway's function form of Codex's freeform tool.
      const declared = sent[0].tools.find((t: any) => t.name === 'apply_patch');
      expect(declared.parameters).toMatchObject({ properties: { input: { type: 'string' } }, required: ['input'] });
      // Round 2 replays the call and carries what Codex reported for it, after it.
      const input = sent[1].input as any[];
      const call = input.find((i) => i.type === 'function_call' && i.name === 'apply_patch');
      expect(JSON.parse(call.arguments)).toEqual({ input: PATCH });
      const output = input.find((i) => i.type === 'function_call_output' && i.call_id === call.call_id);
      expect(input.indexOf(output)).toBeGreaterThan(input.indexOf(call));
      expectPatchReport(typeof output.output === 'string' ? output.output : output.output.map((p: any) => p.text ?? '').join(''));
    },
    CLI_TEST_MS,
  );

  it(
    'a model with listed efforts runs with its own, no fallback warning',
    async () => {
      const before = stack.simulator.requests.length;
      const run = await exec('Think. [[say thought]]', ['-m', 'thinker', '-c', 'model_reasoning_effort="high"']);
      expect(run.stderr + run.stdout).not.toMatch(FALLBACK_WARNING);
      expect(agentMessages(run)).toEqual(['thought']);
      expect((stack.simulator.requests.slice(before)[0].body as any).reasoning).toMatchObject({ effort: 'high' });
    },
    CLI_TEST_MS,
  );

  it(
    'a model the gateway does not list gets Codex’s fallback warning (what the catalog prevents)',
    async () => {
      const run = await exec('Say it. [[say whatever]]', ['-m', 'not-in-the-catalog']);
      expect(run.stderr + run.stdout).toMatch(FALLBACK_WARNING);
    },
    CLI_TEST_MS,
  );

  it(
    'passes Codex’s exit code through',
    async () => {
      const run = await launch(['exec', '--no-such-flag']);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--no-such-flag');
    },
    CLI_TEST_MS,
  );

  it(
    'a key the gateway refuses is named before Codex starts, exit 1',
    async () => {
      const run = await launch(['--version'], { SWITCHYARD_API_KEY: 'sk-wrong' });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`switchyard codex: ${stack.url}/models answered HTTP 401 (set SWITCHYARD_API_KEY)`);
    },
    CLI_TEST_MS,
  );

  it(
    'names the URL when no gateway answers, exit 1, Codex not started',
    async () => {
      const run = await launch(['--version'], { SWITCHYARD_URL: 'http://127.0.0.1:9/v1' });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('switchyard codex: no gateway answered at http://127.0.0.1:9/v1');
      expect(run.stdout).not.toContain('codex-cli');
    },
    CLI_TEST_MS,
  );
});

describe('switchyard codex applying a patch, chat upstream dialect', () => {
  let stack: GatewayStack;
  let proxy: RecordingProxy;
  let dir: string;

  beforeAll(async () => {
    stack = await startStack({ dialect: 'chat', config: { auth: { apiKeys: [KEY] }, models: { coder: { upstreamModel: 'switchyard-sim', contextWindow: 32768 } } } });
    proxy = await RecordingProxy.start(stack.url);
    dir = mkdtempSync(join(tmpdir(), 'switchyard-codex-launcher-chat-'));
    mkdirSync(join(dir, 'work'));
  });
  afterAll(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await proxy?.close();
    await stack?.close();
  });

  it(
    'the call reaches the model server as a chat tool call and its output as the tool message after it',
    async () => {
      const workdir = join(dir, 'work');
      const [before, sentBefore] = [stack.simulator.requests.length, proxy.responses.length];
      const run = await runPatch(workdir, (prompt) => {
        const args = ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-C', workdir, '--', prompt];
        const child = spawn(process.execPath, ['--import', REGISTER, MAIN, 'codex', ...args], {
          env: { PATH: process.env.PATH, HOME: dir, SWITCHYARD_URL: proxy.url, SWITCHYARD_API_KEY: KEY, RUST_LOG: 'error' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        return collectRun(child, CLI_KILL_MS);
      });
      expectCodexPatched(run, proxy.responses.slice(sentBefore));

      const upstream = stack.simulator.requests.slice(before);
      expect(upstream.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
      const sent = upstream.map((r) => r.body as any);
      expect(sent[0].tools.find((t: any) => t.function?.name === 'apply_patch').function.parameters).toMatchObject({ required: ['input'] });
      const messages = sent[1].messages as any[];
      const assistant = messages.findIndex((m) => m.role === 'assistant' && m.tool_calls?.some((c: any) => c.function.name === 'apply_patch'));
      const call = messages[assistant].tool_calls.find((c: any) => c.function.name === 'apply_patch');
      expect(JSON.parse(call.function.arguments)).toEqual({ input: PATCH });
      const tool = messages.findIndex((m) => m.role === 'tool' && m.tool_call_id === call.id);
      expect(tool).toBeGreaterThan(assistant);
      const content = messages[tool].content;
      expectPatchReport(typeof content === 'string' ? content : content.map((p: any) => p.text ?? '').join(''));
    },
    CLI_TEST_MS,
  );
});
