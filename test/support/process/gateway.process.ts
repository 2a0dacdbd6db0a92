import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../../../apps/simulator/src/simulated-upstream.js';
import { startStack, type GatewayStack } from '../gateway-harness.js';

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  openai: OpenAI;
  /** SIGKILL: the process gets no chance to clean up, as in a crash. */
  kill(): Promise<void>;
}

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));

/** Starts the gateway in a child process on a port of its own choosing. */
export function startGatewayProcess(config: Record<string, unknown>): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['--import', here('./ts-register.mjs'), here('./gateway.child.ts'), JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    let stdout = '';
    const onExit = (code: number | null) => reject(new Error(`gateway process exited (${code}) before listening: ${stderr}`));
    child.once('exit', onExit);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n').find((l) => l.startsWith('{"port"'));
      if (!line) return;
      child.off('exit', onExit);
      const url = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}/v1`;
      resolve({
        child,
        url,
        openai: new OpenAI({ baseURL: url, apiKey: 'sk-test', maxRetries: 0, timeout: 20_000 }),
        kill: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGKILL');
          }),
      });
    });
  });
}

export interface ProcessPair {
  /** The model both replicas use: a simulated upstream owned by the test, so aborts are seen here. */
  simulator: SimulatedUpstream;
  /** A replica in a process of its own (killable as a crash would). */
  p: GatewayProcess;
  /** A replica in this process. */
  b: GatewayStack;
  close(): Promise<void>;
}

/** Two replicas of one gateway config, one a separate process, sharing one simulated upstream. */
export async function startProcessPair(config: Record<string, unknown>): Promise<ProcessPair> {
  const simulator = new SimulatedUpstream({});
  const { url: upstream } = await simulator.listen(0, '127.0.0.1');
  const [p, b] = await Promise.all([startGatewayProcess({ ...config, upstream: { baseUrl: upstream }, server: { host: '127.0.0.1', port: 0 } }), startStack({ config })]);
  return {
    simulator,
    p,
    b,
    async close() {
      await p.kill();
      await b.close();
      await simulator.close();
    },
  };
}
