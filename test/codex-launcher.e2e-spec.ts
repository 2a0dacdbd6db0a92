import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { agentMessages, collectRun, type CodexRun } from './support/codex/codex-cli.js';
import { CLI_KILL_MS, CLI_TEST_MS } from './support/cli-run-limits.js';

/**
 * `switchyard codex …` (the real entry point, apps/gateway/src/main.ts) runs
 * the installed Codex CLI against a gateway in front of the simulated
 * upstream. Codex reads the gateway's catalog as its own: no fallback model
 * metadata, and the request it sends declares apply_patch.
 */
const REGISTER = fileURLToPath(new URL('./support/process/ts-register.mjs', import.meta.url));
const MAIN = fileURLToPath(new URL('../apps/gateway/src/main.ts', import.meta.url));
const KEY = 'codex-launcher-key-0123456789';
const FALLBACK_WARNING = /Model metadata for .* not found/;

describe('switchyard codex (the launcher)', () => {
  let stack: GatewayStack;
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
    dir = mkdtempSync(join(tmpdir(), 'switchyard-codex-launcher-'));
    workdir = join(dir, 'work');
    mkdirSync(workdir);
  });
  afterAll(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await stack?.close();
  });

  function launch(args: string[], env: Record<string, string> = {}): Promise<CodexRun> {
    const child = spawn(process.execPath, ['--import', REGISTER, MAIN, 'codex', ...args], {
      env: { PATH: process.env.PATH, HOME: dir, SWITCHYARD_URL: stack.url, SWITCHYARD_API_KEY: KEY, RUST_LOG: 'error', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return collectRun(child, CLI_KILL_MS);
  }
  const exec = (prompt: string, extra: string[] = []) =>
    launch(['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-C', workdir, ...extra, '--', prompt]);

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
