import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import OpenAI from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

/**
 * A local identity provider: OpenID discovery and a JWKS whose keys the test
 * rotates. Tokens are signed here with the official JOSE library.
 */
class LocalIdentityProvider {
  private server!: Server;
  issuer = '';
  keys: JWK[] = [];
  jwksFetches = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') {
        res.end(JSON.stringify({ issuer: this.issuer, jwks_uri: `${this.issuer}/jwks` }));
      } else if (req.url === '/jwks') {
        this.jwksFetches++;
        res.end(JSON.stringify({ keys: this.keys }));
      } else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.issuer = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function signingKey(kid: string): Promise<{ key: CryptoKey; jwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { key: privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

describe('OIDC bearer tokens beside static API keys (local JWKS server, jose-signed tokens)', () => {
  const idp = new LocalIdentityProvider();
  let stack: GatewayStack;
  let k1: { key: CryptoKey; jwk: JWK };
  let k2: { key: CryptoKey; jwk: JWK };

  const token = (key: { key: CryptoKey; jwk: JWK }, claims: Record<string, unknown> = {}, exp: string | number = '5m') =>
    new SignJWT({ sub: 'alice', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: key.jwk.kid })
      .setIssuer(idp.issuer)
      .setAudience((claims.aud as string) ?? 'switchyard')
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(key.key);
  const client = (bearer: string) => new OpenAI({ baseURL: stack.url, apiKey: bearer, maxRetries: 0 });

  beforeAll(async () => {
    await idp.start();
    [k1, k2] = await Promise.all([signingKey('k1'), signingKey('k2')]);
    idp.keys = [k1.jwk];
    stack = await startStack({
      config: { auth: { apiKeys: ['sk-static'], oidc: { issuer: idp.issuer, audience: ['switchyard'], jwksCooldownMs: 0, clockToleranceSec: 0 } } },
    });
  });
  afterAll(async () => {
    await stack.close();
    await idp.close();
  });

  it('accepts a valid token, scopes stored state to its subject, and still accepts static keys', async () => {
    const alice = client(await token(k1));
    const created = await alice.responses.create({ model: 'm', input: '[[say hello alice]]' });
    expect(created.output_text).toBe('hello alice');
    expect((await alice.responses.retrieve(created.id)).id).toBe(created.id);
    // Another subject of the same issuer, and a static key, do not see it.
    const bob = client(await token(k1, { sub: 'bob' }));
    await expect(bob.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(client('sk-static').responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    expect((await client('sk-static').responses.create({ model: 'm', input: '[[say static]]' })).output_text).toBe('static');
    // A fresh token of the same subject is the same owner.
    expect((await client(await token(k1)).responses.retrieve(created.id)).id).toBe(created.id);
  });

  it('refuses expired tokens, wrong audiences, foreign issuers and bad signatures with a 401 that says why', async () => {
    const expired = await token(k1, {}, Math.floor(Date.now() / 1000) - 60);
    await expect(client(expired).responses.create({ model: 'm', input: 'x' })).rejects.toMatchObject({ status: 401, message: expect.stringMatching(/expired/) });
    const wrongAudience = await token(k1, { aud: 'someone-else' });
    await expect(client(wrongAudience).responses.create({ model: 'm', input: 'x' })).rejects.toMatchObject({ status: 401, message: expect.stringMatching(/"aud"/) });
    const forged = (await token(k1)).slice(0, -4) + 'AAAA';
    await expect(client(forged).responses.create({ model: 'm', input: 'x' })).rejects.toMatchObject({ status: 401 });
    const noSubject = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(idp.issuer).setAudience('switchyard').setExpirationTime('5m').sign(k1.key);
    await expect(client(noSubject).responses.create({ model: 'm', input: 'x' })).rejects.toMatchObject({ status: 401, message: expect.stringMatching(/"sub"/) });
    await expect(client('sk-wrong').responses.create({ model: 'm', input: 'x' })).rejects.toMatchObject({ status: 401 });
  });

  it('refuses a token whose owner claim is empty, blank or not a string, in the envelope, before any work', async () => {
    const before = stack.simulator.requests.length;
    for (const sub of ['', '   ', '\t\n', 42, 0, true, null, ['alice'], { id: 'alice' }]) {
      const bearer = await token(k1, { sub });
      const err = await client(bearer)
        .responses.create({ model: 'm', input: 'x' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((err as InstanceType<typeof OpenAI.AuthenticationError>).error).toMatchObject({
        type: 'authentication_error',
        code: 'invalid_api_key',
        message: expect.stringMatching(/"sub" claim .*non-empty string/),
      });
      // Stored state is refused the same way: an empty subject is nobody's, not everybody's.
      await expect(client(bearer).conversations.create({})).rejects.toMatchObject({ status: 401 });
    }
    expect(stack.simulator.requests.length).toBe(before);
  });

  it('follows a key rotation: a token with a new key id refetches the key set; the retired key stops working', async () => {
    const fetchesBefore = idp.jwksFetches;
    idp.keys = [k2.jwk];
    const rotated = client(await token(k2));
    expect((await rotated.responses.create({ model: 'm', input: '[[say rotated]]' })).output_text).toBe('rotated');
    expect(idp.jwksFetches).toBeGreaterThan(fetchesBefore);
    await expect(client(await token(k1)).responses.create({ model: 'm', input: 'x' })).rejects.toMatchObject({ status: 401 });
    // Cached: more requests with the current key do not refetch.
    const fetches = idp.jwksFetches;
    for (let i = 0; i < 3; i++) await rotated.responses.create({ model: 'm', input: '[[say again]]' });
    expect(idp.jwksFetches).toBe(fetches);
  });
});
