import { type ChildProcess, spawn } from 'node:child_process';
import type { CodeInterpreterSettings } from '../../config/code-interpreter-settings.js';
import { sandboxArgs } from '../cpython/cpython-sandbox.backend.js';
import type { ReportedFile } from '../workspace-files.js';
import { KERNEL_DRIVER } from './kernel-driver.js';

/** tmpfs stores a file in whole pages: room for a container's files' last pages on top of its byte budget. */
const PAGE_ROOM = 4096 * 1024;

/** One record of the driver's protocol (see `KERNEL_DRIVER`). */
export function record(kind: string, name: string, data: Uint8Array = new Uint8Array()): Buffer {
  const n = Buffer.from(name, 'utf8');
  const head = Buffer.alloc(5);
  head.write(kind, 0, 'latin1');
  head.writeUInt32BE(n.length, 1);
  const len = Buffer.alloc(8);
  len.writeBigUInt64BE(BigInt(data.length));
  return Buffer.concat([head, n, len, data]);
}

export interface KernelCall {
  status: string;
  stdout: string;
  stderr: string;
  outputTruncated: boolean;
  files: ReportedFile[];
  deleted: string[];
  /** The driver broke the protocol or sent more than a call may: it is stopped. */
  overflow: boolean;
}

interface Pending {
  call: KernelCall;
  out: Buffer[];
  err: Buffer[];
  outputBytes: number;
  fileBytes: number;
  limits: { maxOutputBytes: number; maxReportBytes: number };
  done: (call: KernelCall | undefined) => void;
}

/**
 * One long-lived Python in the sandbox `cpython` uses, minus the container's
 * directory (a pre-started kernel does not know its container yet: files go
 * in over the pipe). Everything it says is parsed as untrusted input: a
 * record over its bound, or one of an unknown kind, stops the kernel.
 */
export class KernelProcess {
  readonly ready: Promise<boolean>;
  /** Stamps (`size:mtimeMs`) of the container files the kernel was last given, keyed by path. */
  synced = new Map<string, string>();
  lastUsed = Date.now();
  busy = false;
  exited = false;
  private readonly child: ChildProcess;
  private buf: Buffer = Buffer.alloc(0);
  private pending: Pending | undefined;
  private onReady: ((ok: boolean) => void) | undefined;
  private readonly exitListeners: Array<() => void> = [];

  constructor(settings: CodeInterpreterSettings) {
    const args = sandboxArgs({
      workspaceBytes: settings.maxContainerBytes + PAGE_ROOM,
      memoryLimitMb: settings.memoryLimitMb,
      // CPU seconds over the kernel's whole life: every call it may run at its full time limit.
      cpuSeconds: Math.ceil((settings.maxCallsPerContainer * (settings.timeoutMs + settings.graceMs)) / 1000),
      nice: settings.nice,
      program: [settings.cpython.python, '-I', '-c', KERNEL_DRIVER],
    });
    this.ready = new Promise((done) => (this.onReady = done));
    this.child = spawn(settings.cpython.bwrap, args, { stdio: ['pipe', 'pipe', 'pipe', 'pipe'], env: {} });
    this.child.stdin!.on('error', () => undefined);
    // Writes of C code straight to descriptors 1 and 2 (a subprocess, os.write) count as the current call's output.
    this.child.stdout!.on('data', (d: Buffer) => this.output('out', d));
    this.child.stderr!.on('data', (d: Buffer) => this.output('err', d));
    (this.child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => this.receive(d));
    this.child.on('error', () => this.exit());
    this.child.on('close', () => this.exit());
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  onExit(listener: () => void): void {
    this.exitListeners.push(listener);
  }

  /** Puts files into the kernel's /mnt/data, deletes others, runs the code; status `exited` if the kernel died on the way (undefined: it was already gone). */
  async run(put: ReportedFile[], remove: string[], code: string, limits: { timeoutMs: number; maxOutputBytes: number; maxReportBytes: number }): Promise<KernelCall | undefined> {
    if (this.exited || this.pending) return undefined;
    const call: KernelCall = { status: '', stdout: '', stderr: '', outputTruncated: false, files: [], deleted: [], overflow: false };
    const finished = new Promise<KernelCall | undefined>((done) => {
      this.pending = { call, out: [], err: [], outputBytes: 0, fileBytes: 0, limits, done };
    });
    for (const f of put) this.child.stdin!.write(record('F', f.path, f.data));
    for (const path of remove) this.child.stdin!.write(record('D', path));
    this.child.stdin!.write(record('C', JSON.stringify({ timeoutMs: limits.timeoutMs, maxOutputBytes: limits.maxOutputBytes }), Buffer.from(code, 'utf8')));
    return finished;
  }

  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }

  private output(which: 'out' | 'err', d: Buffer): void {
    const p = this.pending;
    if (!p) return;
    const room = p.limits.maxOutputBytes - p.outputBytes;
    if (room <= 0) {
      p.call.outputTruncated = true;
      return;
    }
    const part = d.length > room ? d.subarray(0, room) : d;
    if (part.length < d.length) p.call.outputTruncated = true;
    p.outputBytes += part.length;
    (which === 'out' ? p.out : p.err).push(part);
  }

  private receive(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    for (;;) {
      if (this.buf.length < 13) return;
      const kind = String.fromCharCode(this.buf[0]);
      const nameLength = this.buf.readUInt32BE(1);
      const limit = this.pending ? this.pending.limits.maxReportBytes : 64;
      if (nameLength > 4096) return this.broken();
      if (this.buf.length < 5 + nameLength + 8) return;
      const dataLength = Number(this.buf.readBigUInt64BE(5 + nameLength));
      if (dataLength > limit) return this.broken();
      const end = 13 + nameLength + dataLength;
      if (this.buf.length < end) return;
      const name = this.buf.toString('utf8', 5, 5 + nameLength);
      const data = this.buf.subarray(13 + nameLength, end);
      this.buf = this.buf.subarray(end);
      if (!this.handle(kind, name, data)) return this.broken();
    }
  }

  /** One record; false when it breaks the protocol. */
  private handle(kind: string, name: string, data: Buffer): boolean {
    if (kind === 'R') {
      this.onReady?.(true);
      this.onReady = undefined;
      return true;
    }
    const p = this.pending;
    if (!p) return false;
    if (kind === 'O' || kind === 'E') {
      this.output(kind === 'O' ? 'out' : 'err', data);
      return true;
    }
    if (kind === 'F' || kind === 'D') {
      p.fileBytes += data.length;
      if (p.fileBytes > p.limits.maxReportBytes) return false;
      if (kind === 'F') p.call.files.push({ path: name, data: Buffer.from(data) });
      else p.call.deleted.push(name);
      return true;
    }
    if (kind === 'S') {
      this.settle(name);
      return true;
    }
    return false;
  }

  private settle(status: string): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    p.call.status = status;
    p.call.stdout = Buffer.concat(p.out).toString('utf8');
    p.call.stderr = Buffer.concat(p.err).toString('utf8');
    p.done(p.call);
  }

  private broken(): void {
    if (this.pending) this.pending.call.overflow = true;
    this.settle('broken');
    this.kill();
  }

  private exit(): void {
    if (this.exited) return;
    this.exited = true;
    this.onReady?.(false);
    this.onReady = undefined;
    const p = this.pending;
    this.pending = undefined;
    if (p) {
      p.call.stdout = Buffer.concat(p.out).toString('utf8');
      p.call.stderr = Buffer.concat(p.err).toString('utf8');
      p.call.status = 'exited';
      p.done(p.call);
    }
    for (const l of this.exitListeners) l();
  }
}
