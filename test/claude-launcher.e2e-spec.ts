import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { RecordingProxy } from './support/recording-proxy.js';
import { CLI_KILL_MS, CLI_TEST_MS } from './support/cli-run-limits.js';

/**
 * `switchyard claude …` (the real entry point, apps/gateway/src/main.ts) runs
 * the installed Claude Code against a gateway in front of the simulated
 * upstream, on the gateway's catalog model, its output bound and context
 * window taken from the catalog. A recording pass-through keeps what Claude
 * Code sent.
 */
const REGISTER = fileURLToPath(new URL('./support/process/ts-register.mjs', import.meta.url));
const MAIN = fileURLToPath(new URL('../apps/gateway/src/main.ts', import.meta.url));
const KEY = 'claude-launcher-key-0123456789';

describe('switchyard claude (the launcher)', () => {
  let stack: GatewayStack;
  let proxy: RecordingProxy;
  let dir: string;
  let workdir: string;

  beforeAll(async () => {
    stack = await startStack({
      config: { auth: { apiKeys: [KEY] }, models: { coder: { upstreamModel: 'switchyard-sim', contextWindow: 32768, maxOutputTokens: 4096 } } },
    });
    proxy = await RecordingProxy.start(stack.url);
    dir = mkdtempSync(join(tmpdir(), 'switchyard-claude-launcher-'));
    workdir = join(dir, 'work');
    mkdirSync(workdir);
  });
  afterAll(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await proxy?.close();
    await stack?.close();
  });

  function launch(args: string[], cwd = workdir): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['--import', REGISTER, MAIN, 'claude', ...args], {
        cwd,
        env: { PATH: process.env.PATH, HOME: dir, SWITCHYARD_URL: proxy.url, SWITCHYARD_API_KEY: KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), CLI_KILL_MS);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  it(
    'runs a prompt through the gateway on the catalog model, with the catalog’s output bound and the key',
    async () => {
      const [sentBefore, upstreamBefore] = [proxy.messages.length, stack.simulator.requests.length];
      const run = await launch(['-p', '--output-format', 'json', '--', 'Say it. [[say claude-launched]]']);
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ subtype: 'success', is_error: false, result: 'claude-launched' });
      const sent = proxy.messages.slice(sentBefore);
      expect(sent.length).toBeGreaterThanOrEqual(1);
      // Claude Code's own default is 32000; the launcher set the catalog's 4096.
      expect(sent.at(-1)).toMatchObject({ model: 'coder', max_tokens: 4096 });
      expect((stack.simulator.requests.slice(upstreamBefore).at(-1)!.body as any).model).toBe('switchyard-sim');
    },
    CLI_TEST_MS,
  );

  it(
    'Claude Code takes the catalog’s window as the model’s: its result and /context report 32768, not its 200k default',
    async () => {
      const run = await launch(['-p', '--output-format', 'json', '--', 'Say it. [[say sized]]']);
      expect(run.code).toBe(0);
      const result = JSON.parse(run.stdout);
      expect(result).toMatchObject({ result: 'sized', modelUsage: { coder: { contextWindow: 32768 } } });
      // `/context` runs locally (no model request) and prints the window it measures against.
      const context = await launch(['-p', '--', '/context']);
      expect(context.code).toBe(0);
      expect(context.stdout).toContain('**Model:** coder');
      expect(context.stdout).toMatch(/\*\*Tokens:\*\* [\d.]+k \/ 32\.8k \(\d+%\)/);
    },
    CLI_TEST_MS,
  );

  it(
    'a conversation past the catalog’s window is auto-compacted: Claude Code sends the gateway a summary request first',
    async () => {
      // A session of its own, continued with `-c`: compaction needs earlier turns to summarise (one is "too few groups").
      const cwd = join(dir, 'compaction');
      mkdirSync(cwd);
      expect((await launch(['-p', '--', 'First turn. [[say first-done]]'], cwd)).code).toBe(0);
      expect((await launch(['-p', '-c', '--', 'Second turn. [[say second-done]]'], cwd)).code).toBe(0);
      const before = proxy.messages.length;
      // About 5k words: with Claude Code's own ~11k of system prompt and tools, well inside 200k, past 32768's threshold.
      const long = `Read this. ${Array.from({ length: 5000 }, (_, i) => `word${i}`).join(' ')} [[say long-done]]`;
      const run = await launch(['-p', '-c', '--output-format', 'stream-json', '--verbose', '--', long], cwd);
      expect(run.code).toBe(0);
      const events = run.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l));
      const boundary = events.find((e) => e.type === 'system' && e.subtype === 'compact_boundary');
      expect(boundary?.compact_metadata).toMatchObject({ trigger: 'auto' });
      expect(boundary.compact_metadata.pre_tokens).toBeLessThan(32768);
      expect(events.at(-1)).toMatchObject({ type: 'result', result: 'long-done' });
      // The summary request reached the gateway before the answered one, on the catalog model.
      const sent = proxy.messages.slice(before);
      const isSummaryRequest = (body: any) => /<summary>/.test(JSON.stringify(body.messages.at(-1)));
      expect(sent.length).toBeGreaterThanOrEqual(2);
      expect(isSummaryRequest(sent[0])).toBe(true);
      expect(sent[0]).toMatchObject({ model: 'coder' });
      expect(isSummaryRequest(sent.at(-1))).toBe(false);
    },
    CLI_TEST_MS,
  );

  it(
    'passes Claude Code’s exit code through',
    async () => {
      const run = await launch(['--no-such-flag']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('--no-such-flag');
      expect(run.stderr).not.toContain('switchyard claude:');
    },
    CLI_TEST_MS,
  );
});
