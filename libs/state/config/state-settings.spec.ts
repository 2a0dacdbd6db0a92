import { validateGatewayConfig } from '../../config/config.loader.js';
import { DEFAULT_SOCKET_CACHE_SIZE, readStateSettings } from './state-settings.js';

const read = (state: unknown) => readStateSettings(validateGatewayConfig({ state } as Record<string, unknown>));

describe('readStateSettings', () => {
  it('fills defaults when the section is absent', () => {
    expect(read(undefined)).toEqual({ compactionKey: null, socketCacheSize: DEFAULT_SOCKET_CACHE_SIZE, compactionKeepItems: 2 });
  });

  it('reads a full section (as a YAML config file would carry it)', () => {
    expect(read({ compactionKey: 'k'.repeat(32), socketCacheSize: 3, compactionKeepItems: 0 })).toEqual({
      compactionKey: 'k'.repeat(32),
      socketCacheSize: 3,
      compactionKeepItems: 0,
    });
  });

  it('names the bad setting, and never echoes the key', () => {
    expect(() => read({ compactionKey: 'short-secret' })).toThrow(/state\.compactionKey: must be a string of at least 16/);
    expect(() => read({ compactionKey: 'short-secret' })).not.toThrow(/short-secret/);
    expect(() => read({ socketCacheSize: 0 })).toThrow(/state\.socketCacheSize/);
    expect(() => read({ socketCache: 1 })).toThrow(/state\.socketCache: is not a setting/);
    expect(() => read('yes')).toThrow(/state must be an object/);
  });
});
