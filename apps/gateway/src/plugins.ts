import type { DynamicModule, Type } from '@nestjs/common';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { GatewayExecutorProvider, ToolHandlerProvider, taggedType } from '#tool-sdk/decorators.js';
import type { SwitchyardPlugin } from '#src/plugin.js';
import { StartupError } from './startup-error.js';

export { pluginSpecifiers } from './plugin-specifiers.js';

/** A plugin as loaded: where it came from, and what it adds. */
export interface LoadedPlugin extends SwitchyardPlugin {
  name: string;
  specifier: string;
  toolModules: Array<Type | DynamicModule>;
}

const PLUGIN_KEYS = new Set(['name', 'toolModules', 'upstream', 'stateStore']);

/** A plugin that cannot be loaded or says nothing the gateway can use; exit 2, as a bad setting. */
function refuse(specifier: string, why: string): StartupError {
  return new StartupError(`Cannot load plugin "${specifier}" (setting plugins, variable SWITCHYARD_PLUGINS, flag --plugin): ${why}`, 2);
}

/** A path (`./x.js`, `/opt/p/index.js`) from the working directory; a package name as the working directory's project resolves it. */
function resolvePlugin(specifier: string, cwd: string): string {
  if (specifier.startsWith('.') || isAbsolute(specifier)) return pathToFileURL(resolve(cwd, specifier)).href;
  try {
    return pathToFileURL(createRequire(join(cwd, 'package.json')).resolve(specifier)).href;
  } catch (err) {
    throw refuse(specifier, `not installed where the gateway runs (${cwd}): ${firstLine(err)}. Install it (npm install ${specifier}) or give a path.`);
  }
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

function isModuleClass(value: unknown): value is Type {
  return typeof value === 'function' && ['providers', 'imports', 'controllers', 'exports'].some((key) => Reflect.getMetadata(key, value) !== undefined);
}

function isDynamicModule(value: unknown): value is DynamicModule {
  return !!value && typeof value === 'object' && isModuleClass((value as { module?: unknown }).module);
}

/** The plugin object of a module's exports: `default` or `plugin`; a module exporting only Nest modules is a plugin of them. */
function pluginOf(specifier: string, exports: Record<string, unknown>): SwitchyardPlugin {
  const declared = exports.default ?? exports.plugin;
  if (declared && typeof declared === 'object' && !isDynamicModule(declared)) return declared as SwitchyardPlugin;
  const modules = Object.values(exports).filter((v) => isModuleClass(v) || isDynamicModule(v)) as Array<Type | DynamicModule>;
  if (modules.length > 0) return { toolModules: modules };
  throw refuse(specifier, 'it exports no plugin: export default definePlugin({ toolModules: [YourToolModule] }) (from switchyard-gateway).');
}

function checked(specifier: string, plugin: SwitchyardPlugin): LoadedPlugin {
  const unknown = Object.keys(plugin).filter((k) => !PLUGIN_KEYS.has(k));
  if (unknown.length > 0) throw refuse(specifier, `unknown plugin field ${unknown.map((k) => `"${k}"`).join(', ')} (known: ${[...PLUGIN_KEYS].join(', ')}).`);
  const toolModules = plugin.toolModules ?? [];
  if (!Array.isArray(toolModules)) throw refuse(specifier, 'toolModules must be a list of Nest modules.');
  toolModules.forEach((m, i) => {
    if (!isModuleClass(m) && !isDynamicModule(m)) throw refuse(specifier, `toolModules[${i}] is not a Nest module (a class with @Module(), or a dynamic module).`);
  });
  if (toolModules.length === 0 && !plugin.upstream && !plugin.stateStore) throw refuse(specifier, 'it adds nothing: give toolModules, upstream or stateStore.');
  return { ...plugin, name: plugin.name ?? specifier, specifier, toolModules };
}

/** Imports each plugin and checks what it exports; any failure is one line naming the plugin. */
export async function loadPlugins(specifiers: readonly string[], cwd = process.cwd()): Promise<LoadedPlugin[]> {
  const loaded: LoadedPlugin[] = [];
  for (const specifier of specifiers) {
    const url = resolvePlugin(specifier, cwd);
    let exports: Record<string, unknown>;
    try {
      exports = (await import(url)) as Record<string, unknown>;
    } catch (err) {
      throw refuse(specifier, `importing it failed: ${firstLine(err)}`);
    }
    loaded.push(checked(specifier, pluginOf(specifier, exports)));
  }
  for (const key of ['upstream', 'stateStore'] as const) {
    const claiming = loaded.filter((p) => p[key]);
    if (claiming.length > 1) throw refuse(claiming[1].specifier, `${key} is already replaced by plugin "${claiming[0].name}"; one plugin at most may replace it.`);
  }
  return loaded;
}

/** What the plugins add to the gateway module: their tool modules beside the built-in ones, and the overrides. */
export function pluginExtras(plugins: readonly LoadedPlugin[]): {
  imports: Array<Type | DynamicModule>;
  upstream?: SwitchyardPlugin['upstream'];
  stateStore?: SwitchyardPlugin['stateStore'];
} {
  return {
    imports: plugins.flatMap((p) => p.toolModules),
    upstream: plugins.find((p) => p.upstream)?.upstream,
    stateStore: plugins.find((p) => p.stateStore)?.stateStore,
  };
}

/** The providers a module lists, and those of the modules it imports. */
function providersOf(module: Type | DynamicModule, seen = new Set<unknown>()): unknown[] {
  const moduleClass = isDynamicModule(module) ? module.module : module;
  if (seen.has(module)) return [];
  seen.add(module);
  const own = [...((Reflect.getMetadata('providers', moduleClass) as unknown[] | undefined) ?? []), ...(isDynamicModule(module) ? (module.providers ?? []) : [])];
  const imported = [...((Reflect.getMetadata('imports', moduleClass) as unknown[] | undefined) ?? []), ...(isDynamicModule(module) ? (module.imports ?? []) : [])];
  return [...own, ...imported.filter((m): m is Type | DynamicModule => isModuleClass(m) || isDynamicModule(m)).flatMap((m) => providersOf(m, seen))];
}

/** The start-up summary's entry: the plugin, the tool types it brings (gateway-run or client-owned), what it replaces. */
export function describePlugin(plugin: LoadedPlugin): Record<string, unknown> {
  const classes = plugin.toolModules.flatMap((m) => providersOf(m)).map((p) => (typeof p === 'function' ? p : (p as { useClass?: unknown })?.useClass));
  const typeOf = (decorator: typeof ToolHandlerProvider, c: unknown) => taggedType(decorator, c)?.type;
  const handled = classes.map((c) => typeOf(ToolHandlerProvider, c)).filter((t): t is string => !!t);
  const executed = new Set(classes.map((c) => typeOf(GatewayExecutorProvider, c)).filter(Boolean));
  return {
    name: plugin.name,
    ...(plugin.name !== plugin.specifier ? { from: plugin.specifier } : {}),
    tool_types: handled.map((t) => `${t} (${executed.has(t) ? 'gateway' : 'client'})`),
    ...(plugin.upstream ? { replaces_upstream: true } : {}),
    ...(plugin.stateStore ? { replaces_state_store: true } : {}),
  };
}
