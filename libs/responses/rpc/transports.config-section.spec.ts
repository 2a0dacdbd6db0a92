import { loadGatewayConfig } from '#config/config.loader.js';
import { gatewayTransports } from './gateway-transports.js';
import { readTransportsSettings, transportsConfigSection } from './transports.config-section.js';

const sections = [transportsConfigSection];
const load = (env: Record<string, string>) => readTransportsSettings(loadGatewayConfig({ sections, env }));

describe('the transports config section', () => {
  it('serves HTTP only by default, and reads the brokers from the environment', () => {
    expect(load({})).toMatchObject({ patternPrefix: '' });
    expect(gatewayTransports(load({}))).toEqual([]);
    const settings = load({ NATS_URL: 'nats://127.0.0.1:4222', REDIS_URL: 'redis://:pw@127.0.0.1:6379/2', TRANSPORT_PATTERN_PREFIX: 'tenant-a.' });
    expect(settings).toMatchObject({ natsUrl: 'nats://127.0.0.1:4222', redisUrl: 'redis://:pw@127.0.0.1:6379/2', patternPrefix: 'tenant-a.' });
    expect(gatewayTransports(settings)).toHaveLength(2);
  });

  it('names the bad setting and its variable', () => {
    expect(() => load({ NATS_URL: 'http://127.0.0.1:4222' })).toThrow(/transports\.natsUrl \(NATS_URL\): natsUrl must be a URL address/);
    expect(() => load({ REDIS_URL: 'nats://127.0.0.1' })).toThrow(/transports\.redisUrl \(REDIS_URL\)/);
  });

  it('refuses an unknown key with the closest valid name', () => {
    expect(() => loadGatewayConfig({ sections, overrides: { transports: { natsURL: 'nats://x' } } })).toThrow(
      'unknown config key "transports.natsURL" (did you mean "transports.natsUrl"?)',
    );
  });
});
