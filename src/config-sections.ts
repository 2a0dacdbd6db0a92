/**
 * The sections of the built-in libraries that a host reads before (or
 * beside) the Nest container: which brokers to connect, whether the state
 * lives in one process, how to log while booting. Inside the container a
 * provider injects the section's token instead.
 */
export { StorageConfig, STORAGE_SETTINGS, storageConfigSection, parseStorageSettings, readStorageSettings } from '#storage/config/storage.config-section.js';
export {
  ObservabilityConfig,
  OBSERVABILITY_SETTINGS,
  observabilityConfigSection,
  parseObservabilitySettings,
  readObservabilitySettings,
} from '#observability/config/observability.config-section.js';
export { AuthConfig, OidcConfig, AUTH_SETTINGS, authConfigSection, parseAuthSettings, readAuthSettings } from '#state/auth/auth.config-section.js';
export { TransportsConfig, TRANSPORTS_SETTINGS, transportsConfigSection, parseTransportsSettings, readTransportsSettings } from '#responses/rpc/transports.config-section.js';
