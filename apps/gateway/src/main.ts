import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import { notifyPrimary, primaryOffers } from '#core/cluster/primary-channel.js';
import { HELP, UsageError, packageVersion, parseArgs } from './cli-args.js';
import { withLazyDateFormats } from './lazy-date-formats.js';
import { StartupError } from './startup-failure.js';
import { STARTUP_ERROR_SERVICE, isWorker } from './workers.js';

/**
 * `npm start` and the `switchyard` command. Start-up failures print one line
 * naming the setting and exit non-zero (2: configuration, 1: anything else);
 * they never leave the process hanging.
 */
async function main(argv: readonly string[]): Promise<void> {
  const command = parseArgs(argv);
  switch (command.kind) {
    case 'help':
      process.stdout.write(HELP);
      return;
    case 'version':
      process.stdout.write(`switchyard ${packageVersion()}\n`);
      return;
    case 'check-config': {
      const { checkConfig } = await import('./cli.js');
      const sections = await pluginSections(command.configFile, command.plugins);
      const { ok, lines } = checkConfig(process.env, command.configFile, sections);
      (ok ? process.stdout : process.stderr).write(lines.join('\n') + '\n');
      process.exitCode = ok ? 0 : 2;
      return;
    }
    case 'launch': {
      const { LauncherError } = await import('./launchers/gateway-models.js');
      try {
        const launch = command.tool === 'codex' ? (await import('./launchers/codex.launcher.js')).launchCodex : (await import('./launchers/claude.launcher.js')).launchClaude;
        process.exitCode = await launch(command.args);
      } catch (err) {
        if (!(err instanceof LauncherError)) throw err;
        process.stderr.write(`switchyard ${command.tool}: ${err.message}\n`);
        process.exitCode = 1;
      }
      return;
    }
    case 'serve': {
      // Workers run this module with the same arguments, whatever launcher started the primary.
      const worker = { entry: fileURLToPath(import.meta.url), args: argv };
      if (!isWorker() && process.env.WORKERS?.trim() !== '1' && (await startedAsPrimary(command, worker))) return;
      // Loaded here so that --help, --version, check-config and the primary of worker mode run without loading Nest.
      // Nest first, so that its loggers' date formatters are built only if they are ever used (lazy-date-formats.ts).
      await withLazyDateFormats(() => import('@nestjs/common'));
      const { startGateway } = await import('./gateway-app.js');
      await startGateway({ env: process.env, configFile: command.configFile, port: command.port, plugins: command.plugins, worker });
    }
  }
}

/**
 * The config sections with the plugins' modules, when plugins are named (they are
 * imported, so Nest loads); none named: the built-in set, without loading Nest.
 */
async function pluginSections(configFile: string | undefined, flags: readonly string[]) {
  const { pluginSpecifiers } = await import('./plugin-specifiers.js');
  const { ConfigError } = await import('#config/config.loader.js');
  let specifiers: string[];
  try {
    specifiers = pluginSpecifiers({ env: process.env, configFile, flags });
  } catch (err) {
    // An unreadable file is check-config's own first finding.
    if (err instanceof ConfigError) return undefined;
    throw err;
  }
  if (specifiers.length === 0) return undefined;
  const { loadPlugins, pluginExtras } = await import('./plugins.js');
  const { gatewayConfigSections } = await import('#src/gateway-config.loader.js');
  return gatewayConfigSections({ imports: pluginExtras(await loadPlugins(specifiers)).imports });
}

/**
 * Worker mode's primary, when the config asks for more than one worker: the
 * config is read in a child process, so this process never loads the app's modules
 * (Nest, the tools, the plugins) that only its workers run. False when one process serves.
 */
async function startedAsPrimary(command: { configFile?: string; port?: number; plugins: readonly string[] }, worker: { entry: string; args: readonly string[] }): Promise<boolean> {
  const { planInChild } = await import('./plan-in-child.js');
  const { plan, secretNames } = await planInChild({ configFile: command.configFile, port: command.port, plugins: command.plugins });
  if (plan.workers <= 1) return false;
  const { startPrimary } = await import('./primary.js');
  // Taken before forking: no worker or child process inherits the credentials; workers ask the primary.
  const secrets: Record<string, string> = {};
  for (const name of secretNames) {
    const value = process.env[name];
    if (value === undefined) continue;
    secrets[name] = value;
    delete process.env[name];
  }
  await startPrimary({ plan, secrets, worker });
  return true;
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`switchyard: ${err.message}\n`);
    process.exit(64);
  }
  const message = err instanceof StartupError ? err.message : `The gateway could not start: ${err instanceof Error ? err.message : String(err)}`;
  const exitCode = err instanceof StartupError ? err.exitCode : 1;
  // A worker tells the primary, which prints the line once for all workers and exits with the code.
  if (primaryOffers(STARTUP_ERROR_SERVICE)) void notifyPrimary(STARTUP_ERROR_SERVICE, { message, exitCode }).then(() => process.exit(exitCode));
  else {
    process.stderr.write(`${message}\n`);
    process.exit(exitCode);
  }
});
