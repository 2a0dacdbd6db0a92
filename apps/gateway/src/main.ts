import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import { notifyPrimary, primaryOffers } from '#core/cluster/primary-channel.js';
import { HELP, UsageError, checkConfig, packageVersion, parseArgs } from './cli.js';
import { pluginSpecifiers } from './plugin-specifiers.js';
import { ConfigError } from '#config/config.loader.js';
import { StartupError } from './startup-error.js';
import { STARTUP_ERROR_SERVICE } from './workers.js';

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
      const sections = await pluginSections(command.configFile, command.plugins);
      const { ok, lines } = checkConfig(process.env, command.configFile, sections);
      (ok ? process.stdout : process.stderr).write(lines.join('\n') + '\n');
      process.exitCode = ok ? 0 : 2;
      return;
    }
    case 'serve': {
      // Loaded here so that --help, --version and check-config answer without loading Nest.
      const { startGateway } = await import('./gateway-app.js');
      // Workers run this module with the same arguments, whatever launcher started the primary.
      await startGateway({
        env: process.env,
        configFile: command.configFile,
        port: command.port,
        plugins: command.plugins,
        worker: { entry: fileURLToPath(import.meta.url), args: argv },
      });
    }
  }
}

/**
 * The config sections with the plugins' modules, when plugins are named (they are
 * imported, so Nest loads); none named: the built-in set, without loading Nest.
 */
async function pluginSections(configFile: string | undefined, flags: readonly string[]) {
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
