import 'reflect-metadata';
import { secretEnvNames } from '#config/config.loader.js';
import { gatewayConfigSections, loadGatewayConfig } from '#src/gateway-config.loader.js';
import type { PlanReply, PlanRequest } from './plan-in-child.js';
import { primaryPlan } from './primary-plan.js';
import { describeStartupError } from './startup-error.js';

/**
 * The short-lived child of `planInChild`: loads the config as the gateway
 * does (every module's section, and with them the modules), answers with
 * what the primary needs, and exits, taking the modules' memory with it.
 */
process.once('message', (request: PlanRequest) => {
  let reply: PlanReply;
  try {
    const config = loadGatewayConfig({ env: process.env, file: request.configFile, overrides: request.port !== undefined ? { server: { port: request.port } } : undefined });
    reply = { plan: primaryPlan(config), secretNames: secretEnvNames(gatewayConfigSections()) };
  } catch (err) {
    const error = describeStartupError(err);
    reply = { error: { message: error.message, exitCode: error.exitCode } };
  }
  process.send!(reply, () => process.disconnect());
});
