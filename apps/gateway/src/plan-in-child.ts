import { fork } from 'node:child_process';
import type { PrimaryPlan } from './primary.js';
import { StartupError } from './startup-failure.js';

export interface PlanRequest {
  configFile?: string;
  port?: number;
  /** `--plugin` flags: the child loads the plugins, so their config sections are checked as a worker checks them. */
  plugins?: readonly string[];
}

export type PlanReply = { plan: PrimaryPlan; secretNames: string[] } | { error: { message: string; exitCode: number } };

/**
 * What the primary of worker mode runs on (worker count, log format, metrics,
 * limits) and the names of the secret variables, read from the config in a
 * child process that exits once it answered: loading the config loads every
 * module (Nest, the tools) for its section, none of which the primary runs,
 * and memory a thread had used would stay in this process's heap. A bad
 * config is the same `StartupError` line the in-process load gives.
 */
export function planInChild(request: PlanRequest): Promise<{ plan: PrimaryPlan; secretNames: string[] }> {
  // From the sources (the test loader) the child is the .ts file beside this one, run with the same loader flags.
  const script = new URL(`./plan-child${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
  return new Promise((resolve, reject) => {
    const child = fork(script, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let answered = false;
    child.once('message', (reply: PlanReply) => {
      answered = true;
      if ('error' in reply) reject(new StartupError(reply.error.message, reply.error.exitCode));
      else resolve(reply);
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (!answered) reject(new Error(`reading the config failed: its process exited (${signal ?? `exit code ${code}`})`));
    });
    child.send(request);
  });
}
