import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { BatchError, BatchRequestRow } from './batch-rows.js';

const THREAD_SCRIPT = 'batch-input-thread.mjs';
/** Heap of the parsing thread: a file past what it can hold fails the batch instead of the gateway. */
const THREAD_MEMORY_MB = 512;

/** The thread script is plain ES modules beside this file in the source tree; a build looks for it in the package's sources. */
function threadScriptUrl(): URL {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = join(here, 'thread', THREAD_SCRIPT);
  if (existsSync(beside)) return pathToFileURL(beside);
  let dir = here;
  while (dirname(dir) !== dir) {
    const candidate = join(dir, 'libs/passthrough/batches/thread', THREAD_SCRIPT);
    if (existsSync(join(dir, 'package.json')) && existsSync(candidate)) return pathToFileURL(candidate);
    dir = dirname(dir);
  }
  throw new Error(`cannot find the batch input thread script (${THREAD_SCRIPT})`);
}

export type ParsedBatchInput = { requests: BatchRequestRow[]; model?: string; errors?: undefined } | { errors: BatchError[]; requests?: undefined };

/** Parses a tenant's JSONL input file in a thread of its own, so a large file never stalls the event loop. */
export function parseBatchInput(bytes: Uint8Array, endpoint: string, maxRequests: number): Promise<ParsedBatchInput> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(threadScriptUrl(), {
      workerData: { bytes, endpoint, maxRequests, maxErrors: 100 },
      resourceLimits: { maxOldGenerationSizeMb: THREAD_MEMORY_MB },
    });
    let settled = false;
    worker.once('message', (message: ParsedBatchInput) => {
      settled = true;
      resolve(message);
      void worker.terminate();
    });
    worker.once('error', (err) => {
      if (settled) return;
      settled = true;
      if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        resolve({ errors: [{ code: 'file_too_large', line: null, message: 'The input file is too large to read.', param: null }] });
      } else reject(err);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`The batch input thread stopped (exit ${code}).`));
    });
  });
}
