import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_KILL_MS } from '../cli-run-limits.js';

/**
 * The installed `@anthropic-ai/claude-code` CLI through the package's own
 * wrapper, which finds the platform's native binary: `bin/claude.exe` is that
 * binary only once the package's postinstall copied it there.
 */
export const CLAUDE_WRAPPER = fileURLToPath(new URL('../../../node_modules/@anthropic-ai/claude-code/cli-wrapper.cjs', import.meta.url));

export interface ClaudeRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** `--output-format json`: the result object, when stdout parsed. */
  result: any;
}

/** The `--output-format json` result, or null when stdout is not one JSON document. */
function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * `claude -p` against the gateway as the README configures it
 * (`ANTHROPIC_BASE_URL`, `ANTHROPIC_MODEL` and `ANTHROPIC_SMALL_FAST_MODEL`
 * set to the upstream's model), in a throwaway home so no user settings or
 * sessions leak in. The key is a dummy, non-essential traffic (telemetry,
 * update checks) is off: nothing reaches Anthropic.
 */
export class ClaudeCodeHome {
  readonly dir = mkdtempSync(join(tmpdir(), 'switchyard-claude-'));
  readonly workdir = join(this.dir, 'work');

  constructor(
    private readonly baseUrl: string,
    private readonly model: string,
  ) {
    mkdirSync(this.workdir);
  }

  /** Tools run without asking only when listed (`--allowedTools`); the suite runs as root, where skipping permissions is refused. */
  print(prompt: string, options: { allowedTools?: string[]; stdin?: string; timeoutMs?: number } = {}): Promise<ClaudeRun> {
    const args = ['-p', '--output-format', 'json', ...(options.allowedTools?.length ? ['--allowedTools', options.allowedTools.join(',')] : [])];
    if (options.stdin === undefined) args.push('--', prompt);
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [CLAUDE_WRAPPER, ...args], {
        cwd: this.workdir,
        env: {
          PATH: process.env.PATH,
          HOME: this.dir,
          ANTHROPIC_BASE_URL: this.baseUrl,
          ANTHROPIC_API_KEY: 'sk-ant-test',
          ANTHROPIC_MODEL: this.model,
          ANTHROPIC_SMALL_FAST_MODEL: this.model,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_AUTOUPDATER: '1',
        },
        stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      if (options.stdin !== undefined) child.stdin!.end(options.stdin);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d) => (stdout += d));
      child.stderr!.on('data', (d) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? CLI_KILL_MS);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr, result: parseJson(stdout) });
      });
    });
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
