import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../../../apps/simulator/src/simulated-upstream.js';
import { startStack, type GatewayStack } from '../gateway-harness.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REGISTER = fileURLToPath(new URL('./ts-register.mjs', import.meta.url));
const MAIN = fileURLToPath(new URL('../../../apps/gateway/src/main.ts', import.meta.url));

export interface GatewayProcess {
  child: ChildProcess;
  /** Every stdout line so far. */
  readonly stdout: string[];
  /** All of stderr so far. */
  stderr(): string;
  /** Resolves with the first stdout line (past or future) that matches. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Ends the process (SIGKILL) if it is still running. */
  kill(): Promise<void>;
}

/**
 * The real gateway entry point (`apps/gateway/src/main.ts`) in a child
 * process, run from the sources through the swc loader, with exactly the
 * environment given (plus PATH): what an operator's shell would start.
 */
export function spawnGateway(env: Record<string, string>, args: string[] = []): GatewayProcess {
  const child = spawn(process.execPath, ['--import', REGISTER, MAIN, ...args], {
    cwd: ROOT,
    // One process unless a test asks for workers: the tests read one start-up line and one log.
    env: { PATH: process.env.PATH ?? '', WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  let stderr = '';
  let partial = '';
  const waiters = new Set<{ match: (line: string) => boolean; resolve: (line: string) => void }>();
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    partial += chunk;
    let cut: number;
    while ((cut = partial.indexOf('\n')) !== -1) {
      const line = partial.slice(0, cut);
      partial = partial.slice(cut + 1);
      stdout.push(line);
      for (const waiter of waiters) {
        if (waiter.match(line)) {
          waiters.delete(waiter);
          waiter.resolve(line);
        }
      }
    }
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    stdout,
    stderr: () => stderr,
    waitForLine(match, timeoutMs = 30_000) {
      const seen = stdout.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise<string>((resolve, reject) => {
        const waiter = { match, resolve: (line: string) => (clearTimeout(timer), resolve(line)) };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching stdout line within ${timeoutMs} ms; stdout:\n${stdout.join('\n')}\nstderr:\n${stderr}`));
        }, timeoutMs);
        waiters.add(waiter);
        void exited.then(() => {
          if (!waiters.has(waiter)) return;
          waiters.delete(waiter);
          clearTimeout(timer);
          reject(new Error(`gateway exited before a matching line; stdout:\n${stdout.join('\n')}\nstderr:\n${stderr}`));
        });
      });
    },
    exited,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Starts the gateway and waits for its start-up line; returns it parsed, with the base URL. */
export async function startGatewayProcess(env: Record<string, string>, args: string[] = []): Promise<GatewayProcess & { url: string; startup: any }> {
  const gateway = spawnGateway({ HOST: '127.0.0.1', PORT: '0', ...env }, args);
  try {
    const line = await gateway.waitForLine((l) => l.includes('"msg":"listening"'));
    const startup = JSON.parse(line);
    return Object.assign(gateway, { url: startup.listen as string, startup });
  } catch (err) {
    await gateway.kill();
    throw err;
  }
}

/** The request log lines (JSON) printed so far. */
export function requestLines(gateway: GatewayProcess): any[] {
  return gateway.stdout.filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l));
}

/** A replica in a process of its own: the gateway's entry point, killable as a crash would. */
export interface ReplicaProcess {
  child: ChildProcess;
  /** The API base, `/v1` included. */
  url: string;
  openai: OpenAI;
  /** SIGKILL: the process gets no chance to clean up, as in a crash. */
  kill(): Promise<void>;
}

export interface ProcessPair {
  /** The model both replicas use: a simulated upstream owned by the test, so aborts are seen here. */
  simulator: SimulatedUpstream;
  /** A replica in a process of its own. */
  p: ReplicaProcess;
  /** A replica in this process. */
  b: GatewayStack;
  close(): Promise<void>;
}

/**
 * Two replicas of one gateway config sharing one simulated upstream: one is
 * the real entry point in a child process, given the config as a file
 * (`--config`), the other an in-process stack.
 */
export async function startProcessPair(config: Record<string, unknown>): Promise<ProcessPair> {
  const simulator = new SimulatedUpstream({});
  const { url: upstream } = await simulator.listen(0, '127.0.0.1');
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-replica-'));
  const file = join(dir, 'gateway.json');
  writeFileSync(file, JSON.stringify({ ...config, upstream: { ...(config.upstream as object), baseUrl: upstream } }));
  const [gateway, b] = await Promise.all([startGatewayProcess({}, ['--config', file]), startStack({ config })]);
  const url = `${gateway.url}/v1`;
  const p: ReplicaProcess = { child: gateway.child, url, openai: new OpenAI({ baseURL: url, apiKey: 'sk-test', maxRetries: 0, timeout: 20_000 }), kill: () => gateway.kill() };
  return {
    simulator,
    p,
    b,
    async close() {
      await p.kill();
      await b.close();
      await simulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
