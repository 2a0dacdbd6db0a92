import { type ConfigSection, configSectionsOf } from '#config/config-section.js';
import { type LoadConfigOptions, loadGatewayConfig as loadWithSections, validateGatewayConfig as validateWithSections } from '#config/config.loader.js';
import type { GatewayConfig } from '#config/gateway-config.js';
import { gatewayModules } from './gateway.module.js';
import type { GatewayModuleExtras } from './gateway.module-definition.js';

/** The config sections of the modules a gateway with these extras loads (the built-in set by default). */
export function gatewayConfigSections(extras: GatewayModuleExtras = {}): ConfigSection[] {
  return configSectionsOf(gatewayModules(extras));
}

/**
 * Builds the configuration the way `apps/gateway` does: defaults, the config
 * file, core's and every section's environment variables, overrides. The
 * sections are those of the built-in modules unless `sections` names others
 * (`gatewayConfigSections({ imports: [MyToolModule] })`).
 */
export function loadGatewayConfig(options: LoadConfigOptions = {}): GatewayConfig {
  return loadWithSections({ ...options, sections: options.sections ?? gatewayConfigSections() });
}

/** Validates raw settings against core and the built-in modules' sections (or the `sections` given). */
export function validateGatewayConfig(raw: Record<string, unknown> | GatewayConfig, options: { sections?: readonly ConfigSection[] } = {}): GatewayConfig {
  return validateWithSections(raw, { sections: options.sections ?? gatewayConfigSections() });
}
