import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import type { ChunkTerms, ChunkingStrategy } from '../storage/file-search-rows.js';
import { ExtractionError, type PreparationLimits } from './ingestion-contract.js';

const THREAD_SCRIPT = 'ingest-thread.mjs';

/**
 * The thread's script is a plain ES module run by a bare worker thread (no
 * TypeScript loader). It sits in `thread/` beside this file in the source
 * tree; a compiled build has no copy beside the compiled file, so look in
 * the source tree of the package it came from (as the Pyodide host does).
 */
export function threadScriptUrl(script = THREAD_SCRIPT): URL {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = join(here, 'thread', script);
  if (existsSync(beside)) return pathToFileURL(beside);
  let dir = here;
  while (dirname(dir) !== dir) {
    const candidate = join(dir, 'libs/tools/file-search/ingestion/thread', script);
    if (existsSync(join(dir, 'package.json')) && existsSync(candidate)) return pathToFileURL(candidate);
    dir = dirname(dir);
  }
  throw new Error(`cannot find the ingestion thread script (${script})`);
}

/** A prepared chunk: its text and its lexical index entry. */
export interface PreparedChunk {
  text: string;
  terms: ChunkTerms;
}

/** Parses the thread's index lines (`length term count term count ...`, one per chunk). */
export function parseIndexLines(lines: string, n: number): ChunkTerms[] {
  const out: ChunkTerms[] = [];
  if (n === 0) return out;
  for (const line of lines.split('\n')) {
    const parts = line.split(' ');
    const counts: Array<[string, number]> = [];
    for (let i = 1; i + 1 < parts.length; i += 2) counts.push([parts[i], Number(parts[i + 1])]);
    out.push({ length: Number(parts[0]), counts });
  }
  return out;
}

export interface PoolOptions {
  /** Threads at most, created on demand. */
  size: number;
  /**
   * Threads one owner's jobs may hold at once; default `size - 1` (at least
   * 1), so a thread is always left for another owner's first job.
   */
  threadsPerOwner?: number;
  /** Heap of one thread; a file that needs more ends its thread and fails `invalid_file`. */
  memoryMb: number;
  limits: PreparationLimits;
  /** Nice value of the threads (0 to 19; 0 leaves them at the gateway's priority). */
  niceness?: number;
  /** Start the chunk writer thread, so that `prepareAndWrite` can be used (SQLite database files). */
  writer?: boolean;
  /**
   * A thread left without a job this long ends (the writer too, once no
   * ingestion thread is left); the next job starts a fresh one. A loaded
   * thread holds its parsers and tokenizer, tens of MiB, so an idle gateway
   * should not keep it. Unset: threads stay until the pool closes.
   */
  idleMs?: number;
}

/** A job the writer thread completes, through a SQLite connection of its own to `file`. */
export interface ThreadWrite {
  file: string;
  storeId: string;
  fileId: string;
  /** The worker holding the job's claim: the write happens only if it still does. */
  worker: string;
}

/** What the writer reports for a job: `completed` false when the job was no longer the worker's (nothing written). */
export interface Written {
  completed: boolean;
  chunks: number;
}

interface Job {
  owner: string;
  filename: string;
  bytes: Uint8Array;
  chunking: ChunkingStrategy;
  timeoutMs: number;
  write?: ThreadWrite;
  resolve: (out: PreparedChunk[] | Written) => void;
  reject: (e: Error) => void;
}

type Answer = {
  id: number;
  text?: string;
  ends?: Uint32Array;
  terms?: string;
  error?: { code: 'unsupported_file' | 'invalid_file'; message: string };
  /** Prepared; the thread is writing (the job's extraction deadline ends). */
  writing?: true;
  written?: Written;
  /** The database refused the thread's write. */
  failure?: string;
};

/**
 * Everything a file goes through before its chunks are written runs here,
 * off the event loop: detection, extraction (PDF, DOCX, HTML, text),
 * tokenizing and chunking, in worker threads that alone load the parsers
 * and the tokenizer. A job past its deadline, or one that exhausts its
 * thread's heap or stack, ends that thread (terminating is the only way to
 * stop synchronous parsing) and fails `invalid_file`; the next job gets a
 * fresh thread.
 */
export class ExtractionPool {
  private readonly idle: Worker[] = [];
  /** Resolves once a thread has loaded its modules: a job's deadline starts then, not while the thread boots. */
  private readonly loaded = new WeakMap<Worker, Promise<void>>();
  private readonly busy = new Set<Worker>();
  /** Waiting jobs, a queue per owner; `turns` is the order owners are served in, round-robin. */
  private readonly queues = new Map<string, Job[]>();
  private readonly turns: string[] = [];
  private readonly runningPerOwner = new Map<string, number>();
  /** When each owner with work here was last given a thread (a serial number); forgotten once it has none. */
  private readonly lastServed = new Map<string, number>();
  private served = 0;
  private readonly script = threadScriptUrl();
  /**
   * One thread writes every prepared file's rows (`chunk-writer-thread.mjs`),
   * at the gateway's priority: the ingestion threads hand it their chunks
   * over ports of their own, so the rows cross neither the event loop nor
   * the main thread. Started with the first ingestion thread.
   */
  private writer: Worker | undefined;
  /** Ingestion threads whose port leads to a writer that has ended: retired instead of reused. */
  private readonly orphans = new WeakSet<Worker>();
  private readonly withWriter = new Set<Worker>();
  /** The timer that ends each idle thread after `idleMs` without a job. */
  private readonly idleTimers = new Map<Worker, NodeJS.Timeout>();
  /** Every thread started and not yet exited (what `threads` counts). */
  private readonly alive = new Set<Worker>();
  private nextId = 1;
  private closed = false;
  /** The nice value the last thread to start reports it runs at (0 when lowering it was refused). */
  threadNiceness: number | undefined;

  constructor(private readonly options: PoolOptions) {}

  /** Threads one owner may hold at once. */
  get threadsPerOwner(): number {
    return Math.max(1, Math.min(this.options.size, this.options.threadsPerOwner ?? this.options.size - 1));
  }

  /** The file's chunks, in order, with their index entries; `owner` is whose queue the job waits in. */
  prepare(filename: string, bytes: Buffer, chunking: ChunkingStrategy, timeoutMs: number, owner = ''): Promise<PreparedChunk[]> {
    return this.enqueue(owner, filename, bytes, chunking, timeoutMs) as Promise<PreparedChunk[]>;
  }

  /**
   * Prepares the file and has the writer thread complete its job
   * (`ThreadWrite`; needs `writer` in the options): the chunks go from the
   * ingestion thread to the writer, never to the main thread, and their
   * rows are written off the event loop. `timeoutMs` bounds preparing; the
   * write, one transaction, is not cut short (a writer ended mid-write
   * rolls it back).
   */
  prepareAndWrite(filename: string, bytes: Buffer, chunking: ChunkingStrategy, timeoutMs: number, write: ThreadWrite, owner = ''): Promise<Written> {
    return this.enqueue(owner, filename, bytes, chunking, timeoutMs, write) as Promise<Written>;
  }

  /** Threads that have not exited yet: ingestion threads, idle or busy, and the writer. */
  get threads(): number {
    return this.alive.size;
  }

  /** Jobs waiting for a thread, all owners together. */
  get waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  private enqueue(owner: string, filename: string, bytes: Buffer, chunking: ChunkingStrategy, timeoutMs: number, write?: ThreadWrite): Promise<PreparedChunk[] | Written> {
    if (this.closed) return Promise.reject(new Error('the extraction pool is closed'));
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(owner);
      if (!queue) {
        queue = [];
        this.queues.set(owner, queue);
        this.turns.push(owner);
      }
      // A copy the thread can own: the file's buffer may be a slice of a larger one.
      queue.push({ owner, filename, bytes: new Uint8Array(bytes), chunking, timeoutMs, write, resolve, reject });
      this.pump();
    });
  }

  /**
   * The next job to run: of the owners with a job waiting and a thread to
   * spare under `threadsPerOwner`, the one served longest ago (one never
   * served, or not since its last job ended, first), one job per turn. So
   * owners take turns, and one owner's backlog never stands between another
   * owner and a thread.
   */
  private next(): Job | undefined {
    let pick = -1;
    let oldest = Infinity;
    for (let i = 0; i < this.turns.length; i++) {
      const owner = this.turns[i];
      if ((this.runningPerOwner.get(owner) ?? 0) >= this.threadsPerOwner) continue;
      const served = this.lastServed.get(owner) ?? -1;
      if (served < oldest) {
        oldest = served;
        pick = i;
      }
    }
    if (pick < 0) return undefined;
    const owner = this.turns[pick];
    const queue = this.queues.get(owner)!;
    const job = queue.shift()!;
    this.lastServed.set(owner, this.served++);
    if (queue.length === 0) {
      this.queues.delete(owner);
      this.turns.splice(pick, 1);
    }
    return job;
  }

  private pump(): void {
    while (this.idle.length > 0 || this.busy.size < this.options.size) {
      const job = this.next();
      if (!job) return;
      const worker = this.idle.pop() ?? this.spawn();
      this.keep(worker);
      this.run(worker, job);
    }
  }

  /** The writer thread, started when first needed and again after it ended. */
  private chunkWriter(): Worker {
    if (this.writer) return this.writer;
    const writer = new Worker(threadScriptUrl('chunk-writer-thread.mjs'), { execArgv: [] });
    writer.unref();
    this.track(writer);
    writer.on('error', () => undefined);
    writer.once('exit', () => {
      // Retired for idleness (`releaseIdle`): no thread was wired to it any more.
      if (this.writer !== writer) return;
      this.writer = undefined;
      // Threads wired to it cannot write any more: idle ones go now, busy ones when their job ends (theirs fail).
      for (const w of this.withWriter) this.orphans.add(w);
      this.withWriter.clear();
      for (const w of this.idle.splice(0)) {
        this.keep(w);
        void w.terminate();
      }
    });
    this.writer = writer;
    return writer;
  }

  private spawn(): Worker {
    let port: MessagePort | undefined;
    if (this.options.writer) {
      const channel = new MessageChannel();
      port = channel.port1;
      this.chunkWriter().postMessage({ port: channel.port2 }, [channel.port2]);
    }
    const worker = new Worker(this.script, {
      // Plain Node: none of the gateway's own flags or loader hooks.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb },
      workerData: { niceness: this.options.niceness ?? 0, writer: port },
      transferList: port ? [port] : [],
    });
    if (port) this.withWriter.add(worker);
    // An idle thread must not keep the process alive.
    worker.unref();
    this.track(worker);
    this.loaded.set(
      worker,
      new Promise((resolve) =>
        worker.once('message', (m: { niceness?: number }) => {
          this.threadNiceness = m.niceness;
          resolve();
        }),
      ),
    );
    return worker;
  }

  private run(worker: Worker, job: Job): void {
    this.busy.add(worker);
    this.runningPerOwner.set(job.owner, (this.runningPerOwner.get(job.owner) ?? 0) + 1);
    const id = this.nextId++;
    let finished = false;
    const finish = (retire: boolean) => {
      if (finished) return;
      finished = true;
      const held = (this.runningPerOwner.get(job.owner) ?? 1) - 1;
      if (held > 0) this.runningPerOwner.set(job.owner, held);
      else {
        this.runningPerOwner.delete(job.owner);
        if (!this.queues.has(job.owner)) this.lastServed.delete(job.owner);
      }
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      this.busy.delete(worker);
      if (retire || this.closed || this.orphans.has(worker)) {
        this.withWriter.delete(worker);
        void worker.terminate();
      } else this.park(worker);
      this.pump();
    };
    const onMessage = (m: Answer) => {
      if (m.id !== id) return;
      if (m.writing) return clearTimeout(timer);
      finish(false);
      if (m.error) return job.reject(new ExtractionError(m.error.code, m.error.message));
      if (m.failure !== undefined) return job.reject(new Error(m.failure));
      if (m.written) return job.resolve(m.written);
      const terms = parseIndexLines(m.terms ?? '', m.ends!.length);
      const chunks: PreparedChunk[] = new Array(m.ends!.length);
      let from = 0;
      m.ends!.forEach((end, i) => {
        chunks[i] = { text: m.text!.slice(from, end), terms: terms[i] };
        from = end;
      });
      job.resolve(chunks);
    };
    const onError = (e: Error & { code?: string }) => {
      finish(true);
      const why = e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `preparing it needed more than ${this.options.memoryMb} MB` : `the parser failed: ${e.message}`;
      job.reject(new ExtractionError('invalid_file', `${job.filename}: ${why}`));
    };
    const onExit = (code: number) => {
      finish(true);
      job.reject(new ExtractionError('invalid_file', `${job.filename}: the parser thread ended (exit code ${code}).`));
    };
    let timer: NodeJS.Timeout | undefined;
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    void this.loaded.get(worker)!.then(() => {
      if (!this.busy.has(worker)) return;
      timer = setTimeout(() => {
        finish(true);
        job.reject(new ExtractionError('invalid_file', `${job.filename}: text extraction took longer than ${job.timeoutMs} ms.`));
      }, job.timeoutMs);
      worker.postMessage({ id, filename: job.filename, bytes: job.bytes, chunking: job.chunking, limits: this.options.limits, write: job.write }, [
        job.bytes.buffer as ArrayBuffer,
      ]);
    });
  }

  private track(worker: Worker): void {
    this.alive.add(worker);
    worker.once('exit', () => this.alive.delete(worker));
  }

  /** An idle thread waits for a job `idleMs` at most, then ends. */
  private park(worker: Worker): void {
    this.idle.push(worker);
    const { idleMs } = this.options;
    if (idleMs === undefined) return;
    const timer = setTimeout(() => this.releaseIdle(worker), idleMs);
    timer.unref();
    this.idleTimers.set(worker, timer);
  }

  /** The thread has a job again: its idle timer stops. */
  private keep(worker: Worker): void {
    clearTimeout(this.idleTimers.get(worker));
    this.idleTimers.delete(worker);
  }

  private releaseIdle(worker: Worker): void {
    this.idleTimers.delete(worker);
    const at = this.idle.indexOf(worker);
    if (at < 0) return;
    this.idle.splice(at, 1);
    this.withWriter.delete(worker);
    void worker.terminate();
    // The writer serves ingestion threads only: with none left it goes too, and the next thread starts a new one.
    if (this.writer && this.idle.length === 0 && this.busy.size === 0) {
      const writer = this.writer;
      this.writer = undefined;
      void writer.terminate();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.idleTimers.values()) clearTimeout(timer);
    this.idleTimers.clear();
    for (const queue of this.queues.values()) for (const job of queue.splice(0)) job.reject(new Error('the extraction pool is closed'));
    this.queues.clear();
    this.turns.length = 0;
    this.lastServed.clear();
    // The writer last: a write it has begun is rolled back with it, and the job handed back.
    await Promise.all([...this.idle.splice(0), ...this.busy].map((w) => w.terminate()));
    this.busy.clear();
    await this.writer?.terminate();
  }
}
