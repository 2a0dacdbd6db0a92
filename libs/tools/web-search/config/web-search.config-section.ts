import { providerRequirements } from '../providers/search-provider.registry.js';
import { webSearchSection } from './web-search-settings.js';

/** The `webSearch` section for the providers this module ships. */
export const webSearchConfigSection = webSearchSection(providerRequirements());
