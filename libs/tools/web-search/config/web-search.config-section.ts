import { defineConfigSection } from '#tool-sdk/index.js';
import { providerRequirements } from '../providers/search-provider.registry.js';
import { WEB_SEARCH_SETTINGS, type WebSearchSettings, parseWebSearchSettings, webSearchKeys } from './web-search-settings.js';

/** The `webSearch` section: the selected provider, its endpoint, and the per-call budgets. */
export const webSearchConfigSection = defineConfigSection<WebSearchSettings>({
  key: 'webSearch',
  token: WEB_SEARCH_SETTINGS,
  env: [{ env: 'WEB_SEARCH_PROVIDER', path: 'provider', kind: 'string' }],
  // The provider's own endpoint and key go under its name, which only the environment knows.
  fromEnv: (env) => {
    const provider = env.WEB_SEARCH_PROVIDER;
    if (!provider) return undefined;
    const endpoint = {
      ...(env.WEB_SEARCH_URL ? { baseUrl: env.WEB_SEARCH_URL } : {}),
      ...(env.WEB_SEARCH_API_KEY ? { apiKey: env.WEB_SEARCH_API_KEY } : {}),
    };
    return Object.keys(endpoint).length > 0 ? { [provider]: endpoint } : undefined;
  },
  secretEnv: ['WEB_SEARCH_API_KEY'],
  keys: webSearchKeys(providerRequirements()),
  parse: (section) => parseWebSearchSettings(section, providerRequirements()),
});
