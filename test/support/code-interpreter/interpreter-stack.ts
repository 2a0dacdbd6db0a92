import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startStack, type GatewayStack } from '../gateway-harness.js';

export interface InterpreterStack {
  stack: GatewayStack;
  client: OpenAI;
  /** Stops the gateway and removes the containers' data directory. */
  close(): Promise<void>;
}

/**
 * A gateway whose code interpreter keeps its containers in a fresh data
 * directory (`codeInterpreter` is the rest of the section), and an `openai`
 * client with a longer timeout than the harness's: interpreters cold-start in
 * seconds, more on a busy machine.
 */
export async function startInterpreterStack(prefix: string, codeInterpreter: Record<string, unknown>): Promise<InterpreterStack> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const stack = await startStack({ config: { codeInterpreter: { ...codeInterpreter, dataDir } } });
  const client = new OpenAI({ baseURL: stack.url, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000 });
  return {
    stack,
    client,
    close: async () => {
      await stack.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
