import type { Kernel, KernelAPI, KernelConnection, KernelMessage, ServerConnection } from '@jupyterlab/services';
import type { ReportedFile } from '../workspace-files.js';
import { type JupyterEndpoint, KERNEL_NAME } from './jupyter-host.js';
import { FILES_MIME, KERNEL_SETUP } from './jupyter-python.js';

/** What the kernels use of @jupyterlab/services. */
interface JupyterClient {
  KernelAPI: typeof import('@jupyterlab/services').KernelAPI;
  SessionAPI: typeof import('@jupyterlab/services').SessionAPI;
  QuietKernelConnection: typeof import('./quiet-kernel-connection.js').QuietKernelConnection;
  clientSettings: typeof import('./jupyter-client-settings.js').clientSettings;
}
let client: Promise<JupyterClient> | undefined;

/**
 * @jupyterlab/services (about 70 modules with its Lumino dependencies) is
 * imported with the first kernel a process starts or looks up, not when the
 * backend is chosen: a gateway whose tenants never run code does not carry it.
 */
function jupyterClient(): Promise<JupyterClient> {
  client ??= Promise.all([import('@jupyterlab/services'), import('./quiet-kernel-connection.js'), import('./jupyter-client-settings.js')]).then(([services, quiet, settings]) => ({
    KernelAPI: services.KernelAPI,
    SessionAPI: services.SessionAPI,
    QuietKernelConnection: quiet.QuietKernelConnection,
    clientSettings: settings.clientSettings,
  }));
  return client;
}

export interface KernelCall {
  /** `ok`, `error`, `timeout` (interrupted at the time limit), `memory`, `exited` (the kernel died on the way). */
  status: string;
  stdout: string;
  stderr: string;
  outputTruncated: boolean;
  files: ReportedFile[];
  deleted: string[];
  /** PNGs the cell displayed (one per figure), in order. */
  images: Buffer[];
  /** The kernel sent more than a call may: it is stopped. */
  overflow: boolean;
}

/** An execute_request's end: `ok`, the error's name, or `gone` (the kernel died or was stopped first); and its user expressions. */
interface Executed {
  outcome: string;
  expressions: Record<string, any>;
}

/**
 * The file report as a user expression of the program's own cell (its
 * `execute_reply` carries it), so that a call whose cell succeeds is one
 * round trip; IPython evaluates user expressions only after a cell that
 * succeeded, and the others are followed by a `report()` cell.
 */
const REPORT_EXPRESSION = { files: `__import__('_switchyard').report_value()` };

export interface KernelCallLimits {
  timeoutMs: number;
  maxOutputBytes: number;
  maxReportBytes: number;
}

interface Collector {
  call: KernelCall;
  out: string[];
  err: string[];
  outputBytes: number;
  imageBytes: number;
  limits: KernelCallLimits;
}

/** Once the kernel's WebSocket is open (messages sent before would be refused). */
export function connected(k: KernelConnection, gone: Promise<void> = new Promise<void>(() => undefined)): Promise<void> {
  if (k.connectionStatus === 'connected') return Promise.resolve();
  return Promise.race([
    gone,
    new Promise<void>((resolve) => {
      const on = (_: unknown, status: Kernel.ConnectionStatus): void => {
        if (status !== 'connected') return;
        k.connectionStatusChanged.disconnect(on);
        resolve();
      };
      k.connectionStatusChanged.connect(on);
    }),
  ]);
}

/** Shuts a kernel down on its server; retried, since Jupyter Server 1.23 refuses it while it is restarting one that died. */
async function shutdown(id: string, settings: ServerConnection.ISettings): Promise<void> {
  const { KernelAPI } = await jupyterClient();
  for (let attempt = 0; attempt < 5; attempt++) {
    const done = await KernelAPI.shutdownKernel(id, settings).then(
      () => true,
      (err: { response?: Response }) => err.response?.status === 404,
    );
    if (done) return;
    await new Promise((r) => setTimeout(r, 1_000).unref());
  }
}

/** A gateway kernel on the host: published for `container` (as its `session`), or never bound to one. */
export interface HostKernel {
  kernel: KernelAPI.IModel;
  session?: string;
  container?: string;
}

/** The kernel's statuses that mean it is not the one the gateway set up any more. */
const GONE: ReadonlySet<Kernel.Status> = new Set(['dead', 'restarting', 'autorestarting']);

/**
 * One ipykernel on the kernel host, in the bubblewrap sandbox its
 * kernelspec's launcher builds, spoken to over the Jupyter messaging
 * protocol with @jupyterlab/services: the code as an `execute_request`,
 * output from `stream`, `display_data`, `execute_result` and `error`, the
 * time limit as Jupyter's interrupt, the end as its shutdown. Files go in
 * and out as silent cells of the gateway's own (`_switchyard`); everything
 * the kernel sends is read as untrusted input (bounded, names checked by
 * the caller through `ContainerDir`).
 */
export class JupyterKernel {
  readonly ready: Promise<boolean>;
  /** Stamps (`size:mtimeMs`) of the container files the kernel was last given, keyed by path; undefined until it was given a container's files once. */
  synced: Map<string, string> | undefined;
  lastUsed = Date.now();
  busy = false;
  exited = false;
  id: string | undefined;
  /** Found on the kernel host, where another process had bound it to the container (its state is the container's). */
  readonly adopted: boolean;
  private connection: KernelConnection | undefined;
  private settings: ServerConnection.ISettings | undefined;
  /** Set with `settings`, before either is read. */
  private client: JupyterClient | undefined;
  private readonly exitListeners: Array<() => void> = [];
  private gone: (() => void) | undefined;
  private readonly goneSignal = new Promise<void>((r) => (this.gone = r));

  constructor(endpoint: Promise<JupyterEndpoint>, maxMessageBytes: number, existing?: KernelAPI.IModel) {
    this.adopted = existing !== undefined;
    this.ready = this.start(endpoint, maxMessageBytes, existing).then(
      () => !this.exited,
      () => {
        this.exit();
        return false;
      },
    );
  }

  onExit(listener: () => void): void {
    if (this.exited) listener();
    else this.exitListeners.push(listener);
  }

  /** The kernel_info reply (the protocol version, the language), asked over the shell channel. */
  async info(): Promise<KernelMessage.IInfoReply | undefined> {
    const reply = await this.connection?.requestKernelInfo();
    return reply?.content as KernelMessage.IInfoReply | undefined;
  }

  /**
   * Gives the kernel the container's files (`full`: it never had them, so
   * whatever else it holds goes), runs the code, and collects what the cell
   * showed and which files it changed. At `timeoutMs` the kernel is
   * interrupted. Undefined: the kernel was already gone.
   */
  async run(put: ReportedFile[], remove: string[], full: boolean, code: string, limits: KernelCallLimits): Promise<KernelCall | undefined> {
    const k = this.connection;
    if (this.exited || !k) return undefined;
    const call: KernelCall = { status: '', stdout: '', stderr: '', outputTruncated: false, files: [], deleted: [], images: [], overflow: false };
    const c: Collector = { call, out: [], err: [], outputBytes: 0, imageBytes: 0, limits };
    // A kernel that already has the container's files as they are needs no sync cell (a warm call's usual case).
    if (full || put.length || remove.length) {
      const files: Record<string, string> = {};
      for (const f of put) files[f.path] = Buffer.from(f.data).toString('base64');
      // A JSON object of strings and a list of strings are Python literals too.
      const sync = await this.execute(`__import__('_switchyard').put(${JSON.stringify(files)}, ${JSON.stringify(remove)}, ${full ? 'True' : 'False'})`, true);
      if (sync.outcome === 'gone') return this.ended(c);
    }
    let interrupted = false;
    const timer = setTimeout(() => {
      interrupted = true;
      void this.client!.KernelAPI.interruptKernel(this.id!, this.settings).catch(() => undefined);
    }, limits.timeoutMs);
    const ran = await this.execute(code, false, (msg) => this.collect(c, msg), REPORT_EXPRESSION).finally(() => clearTimeout(timer));
    const status = ran.outcome;
    if (status === 'gone') return this.ended(c);
    if (call.overflow) return this.ended(c);
    call.status = status === 'ok' ? 'ok' : status === 'KeyboardInterrupt' && interrupted ? 'timeout' : status === 'MemoryError' ? 'memory' : 'error';
    const expression = ran.expressions.files;
    if (expression?.status === 'ok') this.report(c, expression.data?.['application/json']);
    else {
      // The cell failed (no user expressions), or the expression did (an interrupt arriving just then): the report as a cell of its own.
      const reported = await this.execute(`__import__('_switchyard').report()`, true, (msg) => {
        if (msg.header.msg_type === 'display_data') this.report(c, (msg.content as Record<string, any>).data?.[FILES_MIME]);
      });
      if (reported.outcome === 'gone') return this.ended(c);
    }
    if (call.overflow) return this.ended(c);
    return this.finish(c);
  }

  /** Lets go of the kernel without stopping it: on a shared host it stays the container's, for the next home. */
  detach(): void {
    this.exit();
  }

  /** Stops the kernel through the server (its sandbox goes with its launcher). */
  kill(): void {
    if (this.exited) return;
    const { id, settings } = this;
    this.exit();
    if (id && settings) void shutdown(id, settings);
  }

  /**
   * Records on the kernel host that this kernel is the container's (a Jupyter
   * session whose path is the container id), so that whichever process is the
   * container's home next finds it there.
   */
  async publish(container: string): Promise<void> {
    const { id, settings, client } = this;
    if (!id || !settings || !client) return;
    const { SessionAPI } = client;
    const model = await SessionAPI.startSession({ path: container, name: container, type: 'switchyard', kernel: { id, name: KERNEL_NAME } } as never, settings);
    if (model.kernel?.id !== id) await SessionAPI.updateSession({ id: model.id, path: container, kernel: { id, name: KERNEL_NAME } } as never, settings);
  }

  /** The kernel the host holds for a container (published by `publish`), if it still runs. */
  static async find(endpoint: JupyterEndpoint, container: string): Promise<HostKernel | undefined> {
    const { SessionAPI, clientSettings } = await jupyterClient();
    const sessions = await SessionAPI.listRunning(clientSettings(endpoint, 1 << 20));
    const s = sessions.find((s) => s.path === container);
    const kernel = s?.kernel;
    return kernel && kernel.name === KERNEL_NAME ? { kernel: kernel as KernelAPI.IModel, session: s.id, container } : undefined;
  }

  /**
   * The host's gateway kernels with no connection: whoever held them (the
   * container's home, or the process that pre-started them) stopped or died.
   * A server that does not count connections lists none.
   */
  static async unheld(endpoint: JupyterEndpoint): Promise<HostKernel[]> {
    const { KernelAPI, SessionAPI, clientSettings } = await jupyterClient();
    const settings = clientSettings(endpoint, 1 << 20);
    const [kernels, sessions] = await Promise.all([KernelAPI.listRunning(settings), SessionAPI.listRunning(settings)]);
    const sessionOf = new Map(sessions.filter((s) => s.kernel).map((s) => [s.kernel!.id, s]));
    return kernels
      .filter((k) => k.name === KERNEL_NAME && k.connections === 0)
      .map((kernel) => {
        const s = sessionOf.get(kernel.id);
        return { kernel, session: s?.id, container: s?.path };
      });
  }

  /** Stops a kernel on the host that this process does not hold (with its session, if it has one). */
  static async stopOnHost(endpoint: JupyterEndpoint, target: HostKernel): Promise<void> {
    const { SessionAPI, clientSettings } = await jupyterClient();
    const settings = clientSettings(endpoint, 1 << 20);
    // Shutting the session down stops its kernel too; the kernel alone, when it has none or that failed.
    if (
      target.session &&
      (await SessionAPI.shutdownSession(target.session, settings).then(
        () => true,
        () => false,
      ))
    )
      return;
    await shutdown(target.kernel.id, settings);
  }

  private async start(endpoint: Promise<JupyterEndpoint>, maxMessageBytes: number, existing?: KernelAPI.IModel): Promise<void> {
    const [client, host] = await Promise.all([jupyterClient(), endpoint]);
    const { KernelAPI, QuietKernelConnection } = client;
    this.client = client;
    this.settings = client.clientSettings(host, maxMessageBytes);
    const model = existing ?? (await KernelAPI.startNew({ name: KERNEL_NAME }, this.settings));
    this.id = model.id;
    if (this.exited) {
      void KernelAPI.shutdownKernel(model.id, this.settings).catch(() => undefined);
      return;
    }
    // No stdin channel and no comms: the gateway is the only client, and a cell cannot ask it for input.
    this.connection = new QuietKernelConnection({ model, serverSettings: this.settings, handleComms: false });
    this.connection.statusChanged.connect((_, status) => {
      if (GONE.has(status)) this.kill();
    });
    this.connection.connectionStatusChanged.connect((_, status) => {
      if (status === 'disconnected') this.kill();
    });
    await connected(this.connection, this.goneSignal);
    // A kernel found on the host was set up by the process that started it.
    if (!existing && (await this.execute(KERNEL_SETUP, true)).outcome !== 'ok') throw new Error('the kernel did not take its set-up');
  }

  /** One `execute_request`, to its reply and the kernel's idle status. */
  private async execute(code: string, silent: boolean, onIOPub?: (msg: KernelMessage.IIOPubMessage) => void, userExpressions: Record<string, string> = {}): Promise<Executed> {
    const gone: Executed = { outcome: 'gone', expressions: {} };
    const k = this.connection;
    if (!k || this.exited) return gone;
    let future: Kernel.IShellFuture<KernelMessage.IExecuteRequestMsg, KernelMessage.IExecuteReplyMsg>;
    try {
      future = k.requestExecute({ code, silent, store_history: !silent, allow_stdin: false, stop_on_error: false, user_expressions: userExpressions });
    } catch {
      return gone;
    }
    if (onIOPub) future.onIOPub = onIOPub;
    const reply = await Promise.race([future.done.catch(() => undefined), this.goneSignal.then(() => undefined)]);
    if (!reply || this.exited) return gone;
    const content = reply.content as KernelMessage.IExecuteReply & { ename?: string; user_expressions?: Record<string, any> };
    const expressions = content.user_expressions && typeof content.user_expressions === 'object' ? content.user_expressions : {};
    return { outcome: content.status === 'ok' ? 'ok' : (content.ename ?? 'error'), expressions };
  }

  /** One IOPub message of the program's cell, into the call's output shapes. */
  private collect(c: Collector, msg: KernelMessage.IIOPubMessage): void {
    const type = msg.header.msg_type;
    const content = msg.content as Record<string, any>;
    if (type === 'stream') this.text(c, content.name === 'stderr' ? 'err' : 'out', String(content.text ?? ''));
    else if (type === 'execute_result') this.text(c, 'out', `${String(content.data?.['text/plain'] ?? '')}\n`);
    else if (type === 'error') this.text(c, 'err', `${(content.traceback as unknown[] | undefined)?.map(String).join('\n') ?? `${content.ename}: ${content.evalue}`}\n`);
    else if (type === 'display_data') {
      const png = content.data?.['image/png'];
      if (typeof png === 'string') {
        const data = Buffer.from(png, 'base64');
        c.imageBytes += data.length;
        if (c.imageBytes > c.limits.maxReportBytes) c.call.overflow = true;
        else c.call.images.push(data);
      } else if (typeof content.data?.['text/plain'] === 'string') this.text(c, 'out', `${content.data['text/plain']}\n`);
    }
  }

  /** The kernel's file report (the user expression's value, or the `report()` cell's display): the files the run changed and deleted. */
  private report(c: Collector, body: any): void {
    if (!body || typeof body !== 'object') return;
    let bytes = 0;
    for (const [path, b64] of Object.entries(body.files ?? {})) {
      if (typeof b64 !== 'string') continue;
      const data = Buffer.from(b64, 'base64');
      bytes += data.length;
      if (bytes > c.limits.maxReportBytes) {
        c.call.overflow = true;
        return;
      }
      c.call.files.push({ path, data });
    }
    if (Array.isArray(body.deleted)) c.call.deleted.push(...body.deleted.filter((p: unknown): p is string => typeof p === 'string').slice(0, 100_000));
  }

  private text(c: Collector, which: 'out' | 'err', s: string): void {
    const bytes = Buffer.byteLength(s);
    const room = c.limits.maxOutputBytes - c.outputBytes;
    if (room <= 0) {
      c.call.outputTruncated = true;
      return;
    }
    const part = bytes > room ? Buffer.from(s).subarray(0, room).toString('utf8') : s;
    if (bytes > room) c.call.outputTruncated = true;
    c.outputBytes += Math.min(bytes, room);
    (which === 'out' ? c.out : c.err).push(part);
  }

  private finish(c: Collector): KernelCall {
    c.call.stdout = c.out.join('');
    c.call.stderr = c.err.join('');
    return c.call;
  }

  private ended(c: Collector): KernelCall {
    if (!c.call.overflow) c.call.status = 'exited';
    else c.call.status = 'broken';
    this.kill();
    return this.finish(c);
  }

  private exit(): void {
    if (this.exited) return;
    this.exited = true;
    this.gone?.();
    try {
      const k = this.connection;
      // The client reconnects after a server-side restart on its own (a microtask after the status signal);
      // a kernel the gateway gave up on is not reconnected to, so that step has nothing to do.
      if (k) k.reconnect = () => Promise.resolve();
      k?.dispose();
    } catch {
      // Disposing a connection whose socket already broke.
    }
    for (const l of this.exitListeners.splice(0)) l();
  }
}
