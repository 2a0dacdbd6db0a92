import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { GatewayProcess } from './gateway-process.js';

/** `--import` this through NODE_OPTIONS, with MODULE_RECORD naming the file the record goes to. */
export const MODULE_RECORDER = fileURLToPath(new URL('./module-recorder.mjs', import.meta.url));

/** What module-recorder.mjs writes. */
export interface ModuleRecord {
  modules: string[];
  pushIsNative: boolean;
  parseIsNative: boolean;
}

/**
 * Asks the gateway's main thread for its module record and waits for it.
 * SIGWINCH leaves the gateway running (for a record taken midway); SIGUSR2
 * also stops it (Nest's shutdown hooks take it as a stop signal).
 */
export async function readModuleRecord(gateway: GatewayProcess, record: string, signal: 'SIGWINCH' | 'SIGUSR2' = 'SIGWINCH'): Promise<ModuleRecord> {
  rmSync(record, { force: true });
  gateway.child.kill(signal);
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, 25));
    try {
      return JSON.parse(readFileSync(record, 'utf8')) as ModuleRecord;
    } catch {
      // not written yet
    }
  }
  throw new Error(`the module recorder wrote nothing to ${record}`);
}
