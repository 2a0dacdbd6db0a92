import { loadGatewayConfig } from '#config/config.loader.js';
import { gatewayTransports } from './gateway-transports.js';
import { responsesPatterns } from './responses-rpc.patterns.js';
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

  it('puts the NATS request patterns in a queue group, named by NATS_QUEUE', () => {
    expect(load({})).toMatchObject({ natsQueue: 'switchyard', heartbeatMs: 2000 });
    const nats = (env: Record<string, string>) => gatewayTransports(load({ NATS_URL: 'nats://127.0.0.1:4222', ...env }))[0] as { options: { queue?: string } };
    expect(nats({}).options.queue).toBe('switchyard');
    expect(nats({ NATS_QUEUE: 'team-a' }).options.queue).toBe('team-a');
    expect(load({ TRANSPORT_HEARTBEAT_MS: '500' }).heartbeatMs).toBe(500);
  });

  it('separates a prefix from the pattern, keeping one that ends in a separator', () => {
    expect(responsesPatterns('extender').create).toBe('extender.responses.create');
    expect(responsesPatterns('tenant-a.').cancel).toBe('tenant-a.responses.cancel');
    expect(responsesPatterns('').stream).toBe('responses.stream');
  });

  it('names the bad setting and its variable', () => {
    expect(() => load({ NATS_URL: 'http://127.0.0.1:4222' })).toThrow(/transports\.natsUrl \(NATS_URL\): must be a URL starting nats:\/\/ or tls:\/\/ or ws:\/\/ or wss:\/\//);
    expect(() => load({ REDIS_URL: 'nats://127.0.0.1' })).toThrow(/transports\.redisUrl \(REDIS_URL\)/);
  });

  it('refuses an unknown key with the closest valid name', () => {
    expect(() => loadGatewayConfig({ sections, overrides: { transports: { natsURL: 'nats://x' } } })).toThrow(
      'unknown config key "transports.natsURL" (did you mean "transports.natsUrl"?)',
    );
  });
});
