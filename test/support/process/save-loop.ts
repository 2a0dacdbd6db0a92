import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { StoredResponse } from '#storage/state-store.interface.js';

const REGISTER = fileURLToPath(new URL('./ts-register.mjs', import.meta.url));

/**
 * The response a save-loop child (`*-save-loop.child.ts`) stores under `id`:
 * owner `crash`, one input item and one output item, so a crash test can
 * check both that it was stored and that it was stored whole.
 */
export function crashRecord(id: string): StoredResponse {
  return {
    id,
    owner: 'crash',
    createdAt: 1,
    previousResponseId: null,
    conversationId: null,
    status: 'completed',
    response: { id, output: [{ id: `msg_${id}`, type: 'message', role: 'assistant', content: [] }] },
    inputItems: [{ type: 'message', role: 'user', content: id }],
    modelItems: [],
    tools: [],
    toolChoice: 'auto',
  };
}

/**
 * Runs a save-loop child (a TypeScript file, through the test loader) and
 * kills it with SIGKILL once it has reported `saves` resolved saves (the
 * lines starting `resp_`); `onLine` sees every other line it prints. Resolves
 * with the reported ids and the signal that ended the child, once it has
 * exited; a child that exits on its own first fails the call.
 */
export async function killAfterSaves(
  script: string,
  args: string[],
  saves: number,
  onLine?: (line: string, child: ChildProcess) => void,
): Promise<{ printed: string[]; signal: NodeJS.Signals | null }> {
  const child = spawn(process.execPath, ['--import', REGISTER, script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const printed: string[] = [];
  let buffered = '';
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the save loop exited early (code ${code})`)));
      child.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) {
          if (line.startsWith('resp_')) printed.push(line);
          else onLine?.(line, child);
        }
        if (printed.length >= saves) {
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('exit', r)));
    return { printed, signal: child.signalCode };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
