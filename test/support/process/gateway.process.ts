import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

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
