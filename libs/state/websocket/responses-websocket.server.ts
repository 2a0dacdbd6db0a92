import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { NotFoundError, TooManyConnectionsError } from '#tool-sdk/errors.js';
import { LoopService } from '#core/loop/loop.service.js';
import { RESPONSE_STATE, type ResponseStateStore } from '#core/loop/response-state.interface.js';
import { toErrorEnvelope } from '#edge/errors/error-envelope.js';
import { forwardedHeaders } from '#edge/request/forwarded-headers.js';
import { CreateResponseParser } from '#responses/request/create-response.parser.js';
import { ApiKeyAuthenticator } from '../auth/api-key.authenticator.js';
import { CompactionService } from '../compaction/compaction.service.js';
import { AUTH_SETTINGS, type AuthConfig } from '../auth/auth.config-section.js';
import { STATE_SETTINGS, type StateSettings } from '../config/state-settings.js';
import { ResponsesSocketSession } from './responses-socket.session.js';
import { SocketResponseCache } from './socket-response-cache.js';
import { SocketScopedResponseState } from './socket-scoped.response-state.js';

const PATHS = new Set(['/v1/responses', '/v1/responses/']);
/** Ping quiet sockets so that proxies with idle timeouts keep them open. */
const PING_EVERY_MS = 30_000;

const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 404: 'Not Found', 429: 'Too Many Requests' };
/** The connection-count key of requests without an owner (authentication off). */
const NO_OWNER = '';

/** Answers an upgrade with a plain HTTP error in the OpenAI envelope, then drops the socket. */
function refuse(socket: Duplex, err: unknown): void {
  const { status, body } = toErrorEnvelope(err);
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` + `Connection: close\r\n\r\n${json}`,
  );
}

/**
 * WebSocket mode of the Responses API on `GET /v1/responses`. It hooks the
 * HTTP server's `upgrade` event (Nest routes never see upgrades), checks the
 * API key like every other route, and gives each socket a session with its
 * own response cache in front of the shared state store.
 */
@Injectable()
export class ResponsesWebSocketServer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private wss?: WebSocketServer;
  private server?: Server;
  private pinger?: NodeJS.Timeout;
  /** Open sockets per owner, for `auth.maxSocketsPerOwner`. */
  private readonly openByOwner = new Map<string, number>();

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly parser: CreateResponseParser,
    private readonly loop: LoopService,
    private readonly auth: ApiKeyAuthenticator,
    private readonly compaction: CompactionService,
    @Inject(RESPONSE_STATE) private readonly state: ResponseStateStore,
    @Inject(STATE_SETTINGS) private readonly settings: StateSettings,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(AUTH_SETTINGS) private readonly authSettings: AuthConfig,
  ) {}

  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    // A host without an HTTP server (a microservice) has nothing to upgrade.
    if (!server || typeof server.on !== 'function') return;
    this.server = server;
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.config.server.bodyLimitBytes });
    server.on('upgrade', this.onUpgrade);
    this.pinger = setInterval(() => this.wss?.clients.forEach((ws) => ws.ping()), PING_EVERY_MS);
    this.pinger.unref();
  }

  beforeApplicationShutdown(): void {
    this.server?.off('upgrade', this.onUpgrade);
    clearInterval(this.pinger);
    // Upgraded sockets are no longer the HTTP server's: closing it would leave them open.
    for (const ws of this.wss?.clients ?? []) ws.terminate();
    this.wss?.close();
  }

  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const path = (req.url ?? '/').split('?')[0];
    if (!PATHS.has(path)) {
      // Another listener may own this path; with none, the client must not hang.
      if (this.server?.listenerCount('upgrade') === 1) refuse(socket, new NotFoundError(`No WebSocket endpoint at ${path}; use /v1/responses.`));
      return;
    }
    // The same two headers as every HTTP route (the 401 names both).
    this.auth.authenticate(req.headers.authorization, req.headers['x-api-key']).then(
      (owner) => {
        if (socket.destroyed) return;
        // Each socket holds memory (its response cache) and may run a response at
        // a time, so one key cannot open them without bound.
        const key = owner ?? NO_OWNER;
        const open = this.openByOwner.get(key) ?? 0;
        const limit = this.authSettings.maxSocketsPerOwner;
        if (open >= limit) {
          refuse(socket, new TooManyConnectionsError(`This key already has ${open} open WebSocket connections, the most allowed (auth.maxSocketsPerOwner); close one first.`));
          return;
        }
        this.openByOwner.set(key, open + 1);
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          const left = (this.openByOwner.get(key) ?? 1) - 1;
          if (left > 0) this.openByOwner.set(key, left);
          else this.openByOwner.delete(key);
        };
        // A handshake that fails never becomes a socket: its slot is freed with the TCP socket.
        socket.once('close', release);
        this.wss!.handleUpgrade(req, socket, head, (ws) => {
          ws.once('close', release);
          const state = new SocketScopedResponseState(this.state, new SocketResponseCache(this.settings.socketCacheSize), this.compaction);
          const forwarded = forwardedHeaders(req.headers, this.config.upstream.forwardHeaders ?? []);
          new ResponsesSocketSession(ws, { parser: this.parser, loop: this.loop, state, owner, forwardedHeaders: forwarded });
        });
      },
      (err: unknown) => refuse(socket, err),
    );
  };
}
