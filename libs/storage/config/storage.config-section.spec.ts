import { ConfigError, loadGatewayConfig } from '#config/config.loader.js';
import { readStorageSettings, storageConfigSection } from './storage.config-section.js';

const sections = [storageConfigSection];

describe('the storage config section', () => {
  it('has the documented defaults and reads its environment variables', () => {
    expect(readStorageSettings(loadGatewayConfig({ sections }))).toMatchObject({
      driver: 'sqlite',
      sqlitePath: '.switchyard/state.sqlite',
      connectTimeoutMs: 3_000,
      queryTimeoutMs: 5_000,
    });
    const config = loadGatewayConfig({
      sections,
      env: { STORAGE_DRIVER: 'postgres', DATABASE_URL: 'postgres://db/x', STORE_CONNECT_TIMEOUT_MS: '700', STORE_QUERY_TIMEOUT_MS: '900', SQLITE_PATH: '/tmp/s.sqlite' },
    });
    expect(readStorageSettings(config)).toMatchObject({
      driver: 'postgres',
      postgresUrl: 'postgres://db/x',
      connectTimeoutMs: 700,
      queryTimeoutMs: 900,
      sqlitePath: '/tmp/s.sqlite',
    });
  });

  it('postgres without DATABASE_URL is a configuration error naming the variable, before any module starts', () => {
    expect(() => loadGatewayConfig({ sections, env: { STORAGE_DRIVER: 'postgres' } })).toThrow(ConfigError);
    expect(() => loadGatewayConfig({ sections, env: { STORAGE_DRIVER: 'postgres' } })).toThrow(
      /storage\.postgresUrl \(DATABASE_URL\) is required when storage\.driver \(STORAGE_DRIVER\) is postgres/,
    );
  });

  it('names the bad setting with its variable, and every bad setting at once', () => {
    expect(() => loadGatewayConfig({ sections, env: { STORAGE_DRIVER: 'mongo' } })).toThrow(
      /storage\.driver \(STORAGE_DRIVER\): must be one of "sqlite", "postgres", "memory" \(got "mongo"\)/,
    );
    expect(() => loadGatewayConfig({ sections, env: { STORE_QUERY_TIMEOUT_MS: 'soon' } })).toThrow(
      'storage.queryTimeoutMs (STORE_QUERY_TIMEOUT_MS): must be an integer (got "soon")',
    );
    let message = '';
    try {
      loadGatewayConfig({ sections, overrides: { storage: { connectTimeoutMs: 0, queryTimeoutMs: 0 } } });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.split('\n').slice(1)).toEqual([
      expect.stringMatching(/^ {2}storage\.connectTimeoutMs \(STORE_CONNECT_TIMEOUT_MS\): must be an integer of at least 1 \(got 0\)$/),
      expect.stringMatching(/^ {2}storage\.queryTimeoutMs \(STORE_QUERY_TIMEOUT_MS\): must be an integer of at least 1 \(got 0\)$/),
    ]);
  });

  it('refuses an unknown key with the closest valid name', () => {
    expect(() => loadGatewayConfig({ sections, overrides: { storage: { drivr: 'memory' } } })).toThrow('unknown config key "storage.drivr" (did you mean "storage.driver"?)');
    expect(() => loadGatewayConfig({ sections, overrides: { storage: 'memory' } })).toThrow('storage must be an object of settings');
  });
});
