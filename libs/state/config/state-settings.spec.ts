import { loadGatewayConfig, validateGatewayConfig } from '#config/config.loader.js';
import { DEFAULT_BACKGROUND_SETTINGS, DEFAULT_SOCKET_CACHE_SIZE, readStateSettings, stateConfigSection } from './state-settings.js';

// The parser alone: the section is put on a config core validated, as the module's provider receives it.
const read = (state: unknown) => readStateSettings(Object.assign(validateGatewayConfig({}), { state }));

describe('readStateSettings', () => {
  it('fills defaults when the section is absent', () => {
    expect(read(undefined)).toEqual({
      compactionKey: null,
      socketCacheSize: DEFAULT_SOCKET_CACHE_SIZE,
      compactionKeepItems: 2,
      background: DEFAULT_BACKGROUND_SETTINGS,
    });
  });

  it('reads a full section (as a YAML config file would carry it)', () => {
    expect(read({ compactionKey: 'k'.repeat(32), socketCacheSize: 3, compactionKeepItems: 0, background: { maxRuns: 9, leaseMs: 5000 } })).toEqual({
      compactionKey: 'k'.repeat(32),
      socketCacheSize: 3,
      compactionKeepItems: 0,
      background: { ...DEFAULT_BACKGROUND_SETTINGS, maxRuns: 9, leaseMs: 5000 },
    });
  });

  it('names the bad setting, and never echoes the key', () => {
    expect(() => read({ compactionKey: 'short-secret' })).toThrow(/state\.compactionKey: must be a string of at least 16/);
    expect(() => read({ compactionKey: 'short-secret' })).not.toThrow(/short-secret/);
    expect(() => read({ socketCacheSize: 0 })).toThrow(/state\.socketCacheSize/);
    expect(() => read({ socketCache: 1 })).toThrow(/unknown config key "state\.socketCache" \(did you mean "state\.socketCacheSize"\?\)/);
    expect(() => read('yes')).toThrow(/state must be an object/);
    expect(() => read({ background: { maxRuns: 0 } })).toThrow(/state\.background\.maxRuns: must be an integer from 1/);
    expect(() => read({ background: { lease: 1 } })).toThrow(/unknown config key "state\.background\.lease"/);
    expect(() => read({ background: [] })).toThrow(/state\.background: must be an object/);
  });

  it('takes the background limits from the environment', () => {
    const env = { BACKGROUND_MAX_RUNS: '7', BACKGROUND_MAX_RUNS_PER_OWNER: '2', BACKGROUND_LEASE_MS: '900', COMPACTION_KEY: 'k'.repeat(32) };
    const config = loadGatewayConfig({ env, sections: [stateConfigSection] });
    expect(readStateSettings(config).background).toEqual({ ...DEFAULT_BACKGROUND_SETTINGS, maxRuns: 7, maxRunsPerOwner: 2, leaseMs: 900 });
    expect(readStateSettings(config).compactionKey).toBe('k'.repeat(32));
  });

  it('is checked by the loader: a typo names the closest setting, a bad value its variable', () => {
    expect(() => validateGatewayConfig({ state: { backgrund: {} } }, { sections: [stateConfigSection] })).toThrow(
      'unknown config key "state.backgrund" (did you mean "state.background"?)',
    );
    expect(() => loadGatewayConfig({ env: { BACKGROUND_LEASE_MS: '1' }, sections: [stateConfigSection] })).toThrow(
      /state\.background\.leaseMs \(BACKGROUND_LEASE_MS\): must be an integer from 300/,
    );
    // Without the state module the section belongs to nobody.
    expect(() => loadGatewayConfig({ env: { COMPACTION_KEY: 'k'.repeat(32) } })).not.toThrow();
    expect(() => validateGatewayConfig({ state: {} })).toThrow('unknown config key "state"');
  });
});
