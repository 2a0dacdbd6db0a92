import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/**
 * A tool's backend in a process of its own, so a test can kill it with
 * SIGKILL in the middle of a call (what a crashed or OOM-killed tool server
 * looks like from the gateway). Every POST is answered after `ms`
 * milliseconds (from its JSON body); each arrival is announced on stdout.
 */
const SERVER_SOURCE = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    process.stdout.write('request\\n');
    let ms = 0;
    try { ms = Number(JSON.parse(body).ms) || 0; } catch {}
    setTimeout(() => res.end('tool server answer'), ms);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('listening ' + server.address().port + '\\n'));
`;

export interface ToolServerProcess {
  url: string;
  /** Resolves when the next request has reached the server. */
  nextRequest(): Promise<void>;
  kill(): Promise<void>;
}

export async function startToolServerProcess(): Promise<ToolServerProcess> {
  const child: ChildProcess = spawn(process.execPath, ['-e', SERVER_SOURCE], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  let partial = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    partial += chunk;
    let cut: number;
    while ((cut = partial.indexOf('\n')) !== -1) {
      const line = partial.slice(0, cut);
      partial = partial.slice(cut + 1);
      lines.push(line);
      for (const listener of listeners) listener(line);
    }
  });
  const waitLine = (prefix: string, timeoutMs = 5000) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(new Error(`tool server printed no "${prefix}" line within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (line: string) => {
        if (!line.startsWith(prefix)) return;
        clearTimeout(timer);
        listeners.delete(listener);
        resolve(line);
      };
      listeners.add(listener);
    });
  const port = Number((await waitLine('listening')).split(' ')[1]);
  return {
    url: `http://127.0.0.1:${port}/work`,
    nextRequest: () => waitLine('request').then(() => undefined),
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
