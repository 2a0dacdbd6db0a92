import { gatewayConfigSections } from '#src/gateway-config.loader.js';
import { loadGatewayConfig, secretEnvNames, takeSecretEnv } from './config.loader.js';

describe('credentials leave the environment once the config is loaded', () => {
  it('names every credential variable of core and of the built-in sections', () => {
    const names = secretEnvNames(gatewayConfigSections());
    for (const name of [
      'API_KEYS',
      'UPSTREAM_API_KEY',
      'DATABASE_URL',
      'OIDC_ISSUER',
      'OIDC_JWKS_URI',
      'COMPACTION_KEY',
      'LIMITS_REDIS_URL',
      'NATS_URL',
      'REDIS_URL',
      'WEB_SEARCH_API_KEY',
    ]) {
      expect(names).toContain(name);
    }
    expect(names).not.toContain('PORT');
  });

  it('takes them out of the environment after they filled the config, and leaves the rest', () => {
    const env: Record<string, string | undefined> = { API_KEYS: 'sk-a,sk-b', UPSTREAM_API_KEY: 'up-key', UPSTREAM_URL: 'http://127.0.0.1:1', PORT: '8080' };
    const config = loadGatewayConfig({ env, sections: gatewayConfigSections() });
    const taken = takeSecretEnv(env, secretEnvNames(gatewayConfigSections()));
    expect(taken).toEqual({ API_KEYS: 'sk-a,sk-b', UPSTREAM_API_KEY: 'up-key' });
    expect(env).toEqual({ UPSTREAM_URL: 'http://127.0.0.1:1', PORT: '8080' });
    expect(config.upstream.apiKey).toBe('up-key');
  });
});
