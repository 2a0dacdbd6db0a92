import 'reflect-metadata';
import { secretEnvNames } from '#config/config.loader.js';
import { gatewayConfigSections, loadGatewayConfig } from '#src/gateway-config.loader.js';
import type { PlanReply, PlanRequest } from './plan-in-child.js';
import { primaryPlan } from './primary-plan.js';
import { loadPlugins, pluginExtras, pluginSpecifiers } from './plugins.js';
import { describeStartupError } from './startup-error.js';

/**
 * The short-lived child of `planInChild`: loads the plugins and the config as
 * the gateway does (every module's section, and with them the modules),
 * answers with what the primary needs, and exits, taking the modules'
 * memory with it.
 */
process.once('message', async (request: PlanRequest) => {
  let reply: PlanReply;
  try {
    const specifiers = pluginSpecifiers({ env: process.env, configFile: request.configFile, flags: request.plugins });
    const sections = gatewayConfigSections({ imports: pluginExtras(await loadPlugins(specifiers)).imports });
    const config = loadGatewayConfig({
      env: process.env,
      file: request.configFile,
      sections,
      overrides: { plugins: specifiers, ...(request.port !== undefined ? { server: { port: request.port } } : {}) },
    });
    reply = { plan: primaryPlan(config), secretNames: secretEnvNames(sections) };
  } catch (err) {
    const error = describeStartupError(err);
    reply = { error: { message: error.message, exitCode: error.exitCode } };
  }
  process.send!(reply, () => process.disconnect());
});
