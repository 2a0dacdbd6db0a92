import http from 'node:http';
import https from 'node:https';
import { StreamableTestServer } from '../../../test/support/mcp/mcp-test-servers.js';
import { createGuardedFetch } from './mcp-guarded.fetch.js';
import { HostPolicy, RefusedDestinationError, isNonPublicAddress } from './mcp-host.policy.js';

describe('isNonPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.9.9.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '0.0.0.0',
    '100.64.0.1',
    '::1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    '[::1]',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
  ])('%s is not public', (address) => expect(isNonPublicAddress(address)).toBe(true));

  it.each(['8.8.8.8', '172.32.0.1', '192.169.0.1', '2606:4700::1111', '1.1.1.1'])('%s is public', (address) => expect(isNonPublicAddress(address)).toBe(false));
});

describe('HostPolicy', () => {
  const policy = new HostPolicy(['example.com', '*.corp.internal', '127.0.0.1:8931', '[::1]:9000', '10.0.0.5']);
  const vet = (url: string) => policy.vet(new URL(url));

  it('matches exact hosts on any port, host:port entries on that port only, wildcards on subdomains', () => {
    expect(vet('https://example.com/mcp')).toBe('explicit');
    expect(vet('http://EXAMPLE.com.:8080/mcp')).toBe('explicit');
    expect(vet('http://127.0.0.1:8931/mcp')).toBe('explicit');
    expect(vet('http://[::1]:9000/mcp')).toBe('explicit');
    expect(vet('https://a.b.corp.internal/mcp')).toBe('wildcard');
    expect(() => vet('https://corp.internal/mcp')).toThrow("is not in the gateway's allowed MCP hosts");
    expect(() => vet('http://127.0.0.1:8932/mcp')).toThrow(RefusedDestinationError);
    expect(() => vet('https://evil.com/mcp')).toThrow('host "evil.com"');
    expect(() => vet('https://example.com.evil.com/mcp')).toThrow(RefusedDestinationError);
  });

  it('admits a non-public IP literal only when it is listed explicitly', () => {
    expect(vet('http://10.0.0.5/mcp')).toBe('explicit');
    // The URL parser canonicalises these spellings of loopback, so they cannot sneak past.
    expect(() => vet('http://2130706433:8931/mcp')).not.toThrow();
    expect(() => vet('http://0x7f.1:8931/mcp')).not.toThrow();
    expect(() => new HostPolicy(['*.0.1']).vet(new URL('http://127.0.0.1/'))).toThrow('loopback, private or link-local');
  });

  it('refuses resolved non-public addresses for wildcard matches', () => {
    expect(() => policy.vetAddress('x.corp.internal', '10.9.9.9', 'wildcard')).toThrow('resolves to a loopback, private or link-local address');
    // The address the gateway's resolver gave is the log's, not the tenant's.
    let refused: unknown;
    try {
      policy.vetAddress('x.corp.internal', '10.9.9.9', 'wildcard');
    } catch (err) {
      refused = err;
    }
    expect((refused as Error).message).not.toContain('10.9.9.9');
    expect(refused).toMatchObject({ detail: '"x.corp.internal" resolved to 10.9.9.9' });
    expect(() => policy.vetAddress('x.corp.internal', '93.184.216.34', 'wildcard')).not.toThrow();
    expect(() => policy.vetAddress('example.com', '127.0.0.1', 'explicit')).not.toThrow();
  });
});

describe('createGuardedFetch', () => {
  let server: StreamableTestServer;
  const agents = { httpAgent: new http.Agent(), httpsAgent: new https.Agent() };

  beforeAll(async () => {
    server = await StreamableTestServer.start();
  });
  afterAll(async () => {
    await server.close();
    agents.httpAgent.destroy();
    agents.httpsAgent.destroy();
  });

  /** A resolver with a fixed zone: `*.example.test` names point at loopback, where the test server is. */
  const zone = async (hostname: string) => {
    if (hostname.endsWith('.example.test')) return [{ address: '127.0.0.1', family: 4 }];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  };

  it('checks the address the socket connects to, not just the name', async () => {
    const refusals: Error[] = [];
    const guarded = createGuardedFetch({
      policy: new HostPolicy(['*.example.test']),
      ...agents,
      onRefusal: (e) => refusals.push(e),
      resolve: zone,
    });
    await expect(guarded(`http://rebind.example.test:${server.port}/mcp`, { method: 'GET' })).rejects.toThrow('resolves to a loopback, private or link-local address');
    expect(refusals).toHaveLength(1);
    expect(server.log.httpRequests).toHaveLength(0);
  });

  it('connects when the operator named the host explicitly', async () => {
    const guarded = createGuardedFetch({
      policy: new HostPolicy([`mcp.example.test:${server.port}`]),
      ...agents,
      onRefusal: () => undefined,
      resolve: zone,
    });
    const response = await guarded(`http://mcp.example.test:${server.port}/mcp`, { method: 'GET' });
    // No session: the server refuses the GET, but the request did reach it.
    expect(response.status).toBe(405);
    expect(server.log.httpRequests.at(-1)?.headers.host).toBe(`mcp.example.test:${server.port}`);
  });
});
