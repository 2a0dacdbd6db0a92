import net from 'node:net';

/**
 * A TCP forwarder to a real server that the test can cut (stop listening and
 * drop every connection, as a network partition or a crashed database host
 * looks to the gateway) and restore on the same port.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private frozen = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(port = 0): Promise<this> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      if (this.frozen) {
        client.pause();
        upstream.pause();
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this;
  }

  /** Nothing listens on the port any more, and open connections break. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Connections stay open but nothing passes: a database that stopped answering. */
  freeze(): void {
    this.frozen = true;
    for (const s of this.sockets) s.pause();
  }

  thaw(): void {
    this.frozen = false;
    for (const s of this.sockets) s.resume();
  }

  /** Listens again on the same port. */
  restore(): Promise<this> {
    return this.start(this.port);
  }
}
