import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ExtractionError } from './text-extractor.js';

export type BinaryKind = 'pdf' | 'docx';

/**
 * The parser entry points, resolved here so that the thread (plain Node, no
 * TypeScript loader) imports exactly the packages this module would.
 */
const require = createRequire(import.meta.url);
const PARSERS = { pdf: pathToFileURL(require.resolve('pdf-parse')).href, mammoth: pathToFileURL(require.resolve('mammoth')).href };

/** Runs inside the thread: one request at a time, `{id, kind, bytes}` in, `{id, text}` or `{id, error}` out. */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
parentPort.on('message', async ({ id, kind, bytes }) => {
  try {
    let text;
    if (kind === 'pdf') {
      const { PDFParse } = await import(workerData.pdf);
      const parser = new PDFParse({ data: bytes });
      try { text = (await parser.getText()).text; } finally { await parser.destroy().catch(() => undefined); }
    } else {
      const mammoth = (await import(workerData.mammoth)).default;
      text = (await mammoth.extractRawText({ buffer: Buffer.from(bytes) })).value;
    }
    parentPort.postMessage({ id, text });
  } catch (e) {
    parentPort.postMessage({ id, error: String((e && e.message) || e) });
  }
});
`;

interface Job {
  kind: BinaryKind;
  bytes: Uint8Array;
  filename: string;
  timeoutMs: number;
  resolve: (text: string) => void;
  reject: (e: Error) => void;
}

/**
 * PDF and DOCX parsing off the event loop: pdf.js and mammoth are
 * synchronous for long stretches, and a large file would otherwise stall
 * every request this process serves. A parse past its deadline is ended by
 * terminating its thread (the only way to stop it); the next job gets a
 * fresh one. At most `size` threads, created on demand.
 */
export class ExtractionPool {
  private readonly idle: Worker[] = [];
  private readonly busy = new Set<Worker>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly size: number) {}

  extract(kind: BinaryKind, bytes: Buffer, filename: string, timeoutMs: number): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the extraction pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ kind, bytes: new Uint8Array(bytes), filename, timeoutMs, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0 && (this.idle.length > 0 || this.busy.size < this.size)) {
      const worker = this.idle.pop() ?? this.spawn();
      this.run(worker, this.queue.shift()!);
    }
  }

  private spawn(): Worker {
    const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: PARSERS });
    // An idle thread must not keep the process alive.
    worker.unref();
    return worker;
  }

  private run(worker: Worker, job: Job): void {
    this.busy.add(worker);
    const id = this.nextId++;
    const finish = (retire: boolean) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      this.busy.delete(worker);
      if (retire || this.closed) void worker.terminate();
      else this.idle.push(worker);
      this.pump();
    };
    const onMessage = (m: { id: number; text?: string; error?: string }) => {
      if (m.id !== id) return;
      finish(false);
      if (m.error !== undefined) job.reject(new ExtractionError('invalid_file', `${job.filename} could not be read as a ${job.kind.toUpperCase()}: ${m.error}`));
      else job.resolve(m.text ?? '');
    };
    const onError = (e: Error) => {
      finish(true);
      job.reject(new ExtractionError('invalid_file', `${job.filename}: the parser failed: ${e.message}`));
    };
    const timer = setTimeout(() => {
      finish(true);
      job.reject(new ExtractionError('invalid_file', `${job.filename}: text extraction took longer than ${job.timeoutMs} ms.`));
    }, job.timeoutMs);
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.postMessage({ id, kind: job.kind, bytes: job.bytes });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the extraction pool is closed'));
    await Promise.all([...this.idle.splice(0), ...this.busy].map((w) => w.terminate()));
    this.busy.clear();
  }
}
