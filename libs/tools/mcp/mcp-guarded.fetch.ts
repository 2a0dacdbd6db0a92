import dns from 'node:dns';
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { HostPolicy, RefusedDestinationError, type HostMatch } from './mcp-host.policy.js';

export interface GuardedFetchOptions {
  policy: HostPolicy;
  httpAgent: http.Agent;
  httpsAgent: https.Agent;
  /** Told about every refusal, because the SDK transports rewrap errors and lose their class. */
  onRefusal(error: RefusedDestinationError): void;
  /** Name resolution; the system resolver unless a test supplies its own zone. */
  resolve?: (hostname: string, options: dns.LookupOptions) => Promise<dns.LookupAddress[]>;
}

export const systemResolve = (hostname: string, options: dns.LookupOptions) => dns.promises.lookup(hostname, { ...options, all: true });

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

/**
 * A socket lookup that resolves `hostname` and refuses it unless every
 * address passes the policy for `match`. Used as the connection's own DNS
 * lookup, so the address vetted is the address connected to (no window for a
 * rebinding DNS server between a separate check and the connect).
 */
export function guardedLookup(
  policy: HostPolicy,
  match: HostMatch,
  resolve: (hostname: string, options: dns.LookupOptions) => Promise<dns.LookupAddress[]>,
  onRefusal: (error: RefusedDestinationError) => void,
): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolve(hostname, lookupOptions).then(
      (addresses) => {
        try {
          // Every address is checked, not just the first: the socket may try them all.
          for (const { address } of addresses) policy.vetAddress(hostname, address, match);
        } catch (refusal) {
          onRefusal(refusal as RefusedDestinationError);
          return callback(refusal as Error, '', 0);
        }
        if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' }), '', 0);
        if (lookupOptions.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/**
 * The refusal of a redirect whose target the policy refuses (or whose
 * Location cannot be read), after destroying the response and telling
 * `onRefusal`; undefined for any other answer. Redirects are never followed,
 * so this is what keeps one from pointing a caller into the gateway's network.
 */
export function refusedRedirect(
  res: http.IncomingMessage,
  base: URL,
  policy: HostPolicy,
  onRefusal: (error: RefusedDestinationError) => void,
): RefusedDestinationError | undefined {
  const status = res.statusCode ?? 0;
  const location = res.headers.location;
  if (status < 300 || status >= 400 || !location) return undefined;
  try {
    policy.vet(new URL(location, base), 'MCP server redirect target');
    return undefined;
  } catch (err) {
    res.destroy();
    const refusal = err instanceof RefusedDestinationError ? err : new RefusedDestinationError('MCP server sent a redirect with an unreadable Location.');
    onRefusal(refusal);
    return refusal;
  }
}

/**
 * A `fetch` for the MCP transports of request-declared servers.
 *
 * It is built on `node:http` rather than the global `fetch` so that the
 * address check happens in the socket's own DNS lookup: the address that is
 * vetted is the address that is connected to, which closes the window a
 * rebinding DNS server would otherwise use between a separate check and the
 * connect. Redirects are never followed here; a redirect whose target the
 * policy refuses fails the request outright, so neither the SDK's same-origin
 * redirect handling nor a caller can be walked into the gateway's network.
 */
export function createGuardedFetch(options: GuardedFetchOptions): FetchLike {
  const { policy } = options;
  const resolve = options.resolve ?? systemResolve;
  const refuse = (error: RefusedDestinationError): never => {
    options.onRefusal(error);
    throw error;
  };

  return async (input, init = {}) => {
    const url = new URL(typeof input === 'string' ? input : input.href);
    let match: HostMatch;
    try {
      match = policy.vet(url);
    } catch (err) {
      return refuse(err as RefusedDestinationError);
    }
    // The transports send JSON text; other bodies go through a Response to read them.
    const body = init.body == null ? undefined : typeof init.body === 'string' ? init.body : Buffer.from(await new Response(init.body).arrayBuffer());
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();

    const lookup = guardedLookup(policy, match, resolve, options.onRefusal);

    return new Promise<Response>((resolve, reject) => {
      // One abort listener per request, covering both the wait for headers and
      // the body: the transports share one signal across all their requests.
      let response: http.IncomingMessage | undefined;
      const onAbort = () => {
        const reason = signal?.reason instanceof Error ? signal.reason : new Error('aborted');
        request.destroy(reason);
        response?.destroy(reason);
        reject(reason);
      };
      const request = (url.protocol === 'https:' ? https : http).request(
        url,
        {
          method: init.method ?? 'GET',
          headers: Object.fromEntries(new Headers(init.headers).entries()),
          agent: url.protocol === 'https:' ? options.httpsAgent : options.httpAgent,
          lookup,
        },
        (res) => {
          response = res;
          res.once('close', () => signal?.removeEventListener('abort', onAbort));
          const status = res.statusCode ?? 502;
          const refusal = refusedRedirect(res, url, policy, options.onRefusal);
          if (refusal) return reject(refusal);
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (Array.isArray(value)) for (const v of value) headers.append(name, v);
            else if (value !== undefined) headers.set(name, value);
          }
          const nullBody = NULL_BODY_STATUS.has(status) || init.method === 'HEAD';
          if (nullBody) res.resume();
          resolve(
            new Response(nullBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status,
              statusText: res.statusMessage,
              headers,
            }),
          );
        },
      );
      if (signal) {
        // The transports pass one signal to all their requests, so overlapping
        // calls legitimately stack listeners on it; each is removed when its
        // response closes.
        setMaxListeners(0, signal);
        signal.addEventListener('abort', onAbort, { once: true });
      }
      request.on('error', (err) => {
        signal?.removeEventListener('abort', onAbort);
        reject(err);
      });
      request.end(body);
    });
  };
}
