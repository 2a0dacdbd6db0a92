import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_KILL_MS } from '../cli-run-limits.js';

/** The installed `@openai/codex` CLI (its native binary, found through the package's launcher). */
export const CODEX_BIN = fileURLToPath(new URL('../../../node_modules/.bin/codex', import.meta.url));

export interface CodexRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** `--json` events, one per stdout line that parsed. */
  events: any[];
}

/**
 * A Codex process's output once it closes (killed after `timeoutMs`): both streams, and its `--json` events,
 * one per stdout line that parses. The launcher tests collect `switchyard codex` the same way.
 */
export function collectRun(child: ChildProcess, timeoutMs: number): Promise<CodexRun> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const events = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .flatMap((l) => {
          try {
            return [JSON.parse(l)];
          } catch {
            return [];
          }
        });
      resolve({ code, stdout, stderr, events });
    });
  });
}

/**
 * A throwaway Codex home whose only model provider is the gateway, over the
 * Responses wire (`wire_api = "responses"`), as the README tells users to
 * configure it. Nothing reaches OpenAI: the provider's key is a dummy, and
 * the upstream is the simulated one. A model from Codex's own catalog
 * (`gpt-5.5`) makes Codex send what it sends OpenAI for that model: images
 * with `detail: "original"`, `service_tier`, efforts past `high`.
 */
export class CodexHome {
  readonly dir = mkdtempSync(join(tmpdir(), 'switchyard-codex-'));
  readonly workdir = join(this.dir, 'work');

  constructor(gatewayUrl: string, model = 'switchyard-sim') {
    mkdirSync(this.workdir);
    writeFileSync(
      join(this.dir, 'config.toml'),
      [
        'model_provider = "switchyard"',
        // Nothing of the run goes anywhere but the gateway.
        'check_for_update_on_startup = false',
        `model = "${model}"`,
        '[model_providers.switchyard]',
        'name = "Switchyard"',
        `base_url = "${gatewayUrl}"`,
        'wire_api = "responses"',
        'env_key = "SWITCHYARD_TEST_KEY"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '[analytics]',
        'enabled = false',
        '[feedback]',
        'enabled = false',
      ].join('\n'),
    );
  }

  /** `codex exec` with the prompt; `-c` overrides and extra flags as given. Resolves whatever the exit code. */
  exec(prompt: string, args: string[] = [], options: { stdin?: string; timeoutMs?: number } = {}): Promise<CodexRun> {
    return this.run([...args, '--', prompt], options);
  }

  /** `codex exec resume <thread> <prompt>`: the recorded session replayed, then the prompt. */
  resume(threadId: string, prompt: string, options: { timeoutMs?: number } = {}): Promise<CodexRun> {
    return this.run(['resume', threadId, '--', prompt], options);
  }

  private run(rest: string[], options: { stdin?: string; timeoutMs?: number }): Promise<CodexRun> {
    const timeoutMs = options.timeoutMs ?? CLI_KILL_MS;
    // stdin closed unless given: with an open pipe there, `codex exec` waits for more prompt on it.
    const child = spawn(CODEX_BIN, ['exec', '--json', '--strict-config', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-C', this.workdir, ...rest], {
      env: { PATH: process.env.PATH, HOME: this.dir, CODEX_HOME: this.dir, SWITCHYARD_TEST_KEY: 'sk-test', RUST_LOG: 'error' },
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (options.stdin !== undefined) child.stdin!.end(options.stdin);
    return collectRun(child, timeoutMs);
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The final answers of a `--json` run. */
export const agentMessages = (run: CodexRun): string[] => run.events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message').map((e) => e.item.text);
/** The thread a run started (what `resume` takes). */
export const threadOf = (run: CodexRun): string => run.events.find((e) => e.type === 'thread.started')?.thread_id;
