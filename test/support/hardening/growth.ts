import http from 'node:http';
import net from 'node:net';

/** Wall time of `work`, in milliseconds, from `process.hrtime` (for ratios only, never compared to a constant). */
export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await work();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

/** CPU time (user + system) of this process in milliseconds: unlike wall time, barely moved by other load on the machine. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * How long a `/health` asked now waits, as the lesser of its wall time and
 * the CPU time this process spent until it was answered. On a quiet machine
 * the wall time is the answer; on one whose cores are taken by other work,
 * wall time mostly measures the OS scheduler, while the CPU time still says
 * how much work the event loop did before it got to `/health`. A loop
 * blocked by a request is slow by both measures.
 */
export async function probeHealth(base: string): Promise<{ ms: number; status: number }> {
  const cpuStart = cpuMs();
  const { ms, value } = await timed(() => get(`${base}/health`));
  return { ms: Math.min(ms, cpuMs() - cpuStart), status: value.status };
}

export function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer from ${url}`)));
    req.on('error', reject);
  });
}

/** What the gateway answered to a body it was sent only the head of, and the `/health` answers it gave meanwhile. */
export interface HeadOnlyOutcome {
  /** The answer, or null when none came while the rest of the body was owed. */
  answer: { status: number; head: string; body: string } | null;
  /** The status of each `/health` answered while the head went out and the answer was awaited, in order. */
  health: number[];
  /** How many slices the head went out in: a `/health` was answered after each. */
  slices: number;
}

/**
 * POSTs to `path` a request announcing `contentLength` bytes of body but
 * sending only `head`, in slices of `sliceBytes`. After each slice it asks
 * `/health` on a connection of its own and sends the next slice only once that
 * is answered; then it keeps asking `/health`, one request at a time, until the
 * POST is answered or `patience` more `/health` answers came without it, and
 * hangs up. The rest of the body is never sent.
 *
 * So an answer, if any, was given on the head alone, while the body was still
 * owed: a gateway that waits for a whole body to handle it in one piece, the
 * piece that held the event loop for seconds, cannot give it. Patience is
 * counted in requests the gateway served, not in time, so it means the same on
 * a fast and on a slow machine: the head's last bytes were on the gateway's
 * socket before the first of those requests was sent. Nothing is written
 * after the head, so a gateway that answers and closes the connection cannot
 * make a later write fail and lose the answer.
 */
export async function sendHeadOnly(
  base: string,
  path: string,
  options: { head: Buffer; contentLength: number; headers?: Record<string, string>; sliceBytes?: number; patience?: number },
): Promise<HeadOnlyOutcome> {
  const { head, contentLength, headers = {}, sliceBytes = 64 * 1024, patience = 20 } = options;
  const { hostname, port } = new URL(base);
  const socket = net.connect(Number(port), hostname);
  const received: Buffer[] = [];
  let closed = false;
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  // A gateway that answers early may reset the connection after its answer: what arrived is kept.
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const answer = () => completeAnswer(Buffer.concat(received), closed);
  const write = (bytes: Buffer) => new Promise<void>((resolve) => socket.write(bytes, () => resolve()));
  const health: number[] = [];
  const askHealth = async () => health.push((await get(`${base}/health`)).status);

  const fields = { host: `${hostname}:${port}`, 'content-type': 'application/json', 'content-length': String(contentLength), connection: 'close', ...headers };
  const fieldLines = Object.entries(fields).map(([name, value]) => `${name}: ${value}\r\n`);
  const requestHead = Buffer.from(`POST ${path} HTTP/1.1\r\n${fieldLines.join('')}\r\n`);
  const slices = Math.max(1, Math.ceil(head.length / sliceBytes));
  try {
    for (let i = 0; i < slices && !answer(); i++) {
      const slice = head.subarray(i * sliceBytes, (i + 1) * sliceBytes);
      await write(i === 0 ? Buffer.concat([requestHead, slice]) : slice);
      await askHealth();
    }
    for (let waited = 0; !answer() && waited < patience; waited++) await askHealth();
    return { answer: answer(), health, slices };
  } finally {
    socket.destroy();
  }
}

/** The HTTP answer in `bytes` once all of it arrived (its content-length, or the connection closed), else null. */
function completeAnswer(bytes: Buffer, closed: boolean): { status: number; head: string; body: string } | null {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = bytes.subarray(0, end).toString('latin1');
  const length = /^content-length:\s*(\d+)/im.exec(head);
  const body = bytes.subarray(end + 4);
  if (length ? body.length < Number(length[1]) : !closed) return null;
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: body.toString('utf8') };
}
