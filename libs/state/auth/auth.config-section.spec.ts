import { loadGatewayConfig } from '#config/config.loader.js';
import { authConfigSection, readAuthSettings } from './auth.config-section.js';

const sections = [authConfigSection];
const load = (env: Record<string, string>) => readAuthSettings(loadGatewayConfig({ sections, env }));

describe('the auth config section', () => {
  it('has the documented defaults and reads its environment variables', () => {
    expect(load({})).toMatchObject({ apiKeys: [], maxSocketsPerOwner: 64 });
    expect(load({}).oidc).toBeUndefined();
    const settings = load({ API_KEYS: 'sk-a, sk-b', MAX_SOCKETS_PER_OWNER: '3', OIDC_ISSUER: 'https://idp.example', OIDC_AUDIENCE: 'gw,api', OIDC_OWNER_CLAIM: 'email' });
    expect(settings).toMatchObject({ apiKeys: ['sk-a', 'sk-b'], maxSocketsPerOwner: 3 });
    expect(settings.oidc).toMatchObject({ issuer: 'https://idp.example', audience: ['gw', 'api'], ownerClaim: 'email', clockToleranceSec: 30, jwksCacheMs: 600_000 });
  });

  it('names the bad setting and its variable, inside oidc too', () => {
    expect(() => load({ MAX_SOCKETS_PER_OWNER: '0' })).toThrow(/auth\.maxSocketsPerOwner \(MAX_SOCKETS_PER_OWNER\): must be an integer of at least 1 \(got 0\)/);
    expect(() => load({ OIDC_AUDIENCE: 'gw' })).toThrow(/auth\.oidc\.issuer \(OIDC_ISSUER\): must be a URL starting http:\/\/ or https:\/\//);
  });

  it('refuses an unknown key at any depth with the closest valid name', () => {
    expect(() => loadGatewayConfig({ sections, overrides: { auth: { apiKey: ['x'] } } })).toThrow('unknown config key "auth.apiKey" (did you mean "auth.apiKeys"?)');
    expect(() => loadGatewayConfig({ sections, overrides: { auth: { oidc: { issuer: 'https://idp.example', audiance: ['gw'] } } } })).toThrow(
      'unknown config key "auth.oidc.audiance" (did you mean "auth.oidc.audience"?)',
    );
  });
});
