import { defineConfigSection } from '#config/config-section.js';
import { STATE_KEYS, STATE_SETTINGS, type StateSettings, readStateSettings } from './state-settings.js';

/** The `state` section: compaction, the WebSocket cache, background runs. */
export const stateConfigSection = defineConfigSection<StateSettings>({
  key: 'state',
  token: STATE_SETTINGS,
  env: [
    { env: 'COMPACTION_KEY', path: 'compactionKey', kind: 'string', secret: true },
    { env: 'BACKGROUND_MAX_RUNS', path: 'background.maxRuns', kind: 'int' },
    { env: 'BACKGROUND_MAX_RUNS_PER_OWNER', path: 'background.maxRunsPerOwner', kind: 'int' },
    { env: 'BACKGROUND_LEASE_MS', path: 'background.leaseMs', kind: 'int' },
  ],
  keys: STATE_KEYS,
  parse: (_section, config) => readStateSettings(config),
});
