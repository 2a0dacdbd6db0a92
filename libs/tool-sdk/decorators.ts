import { SetMetadata } from '@nestjs/common';

/** What every extension decorator carries: the key the explorer indexes the provider under. */
export interface TypeKey {
  type: string;
}

/** A class decorator with the metadata key it writes, for the explorer to read back. */
export interface TypeKeyDecorator {
  (options: TypeKey): ClassDecorator;
  readonly KEY: symbol;
}

/**
 * Keys from the global symbol registry: a plugin built in its own project
 * brings its own copy of this package, and every copy must tag a provider
 * the way the gateway's copy reads it. `DiscoveryService.createDecorator()`
 * draws a random key per copy, so a plugin's providers looked untagged.
 */
function typeKeyDecorator(name: string): TypeKeyDecorator {
  const key = Symbol.for(`switchyard-gateway:${name}`);
  const decorator = (options: TypeKey): ClassDecorator => SetMetadata(key, options);
  return Object.assign(decorator, { KEY: key });
}

/** The `type` a class is tagged with by `decorator`, if any. */
export function taggedType(decorator: TypeKeyDecorator, target: unknown): TypeKey | undefined {
  return typeof target === 'function' ? (Reflect.getMetadata(decorator.KEY, target) as TypeKey | undefined) : undefined;
}

/**
 * Tags a provider as the `ToolHandler` of a tool type. The explorer finds
 * tagged providers at start-up and checks `type` against the instance's own
 * `type`; core never imports a tool module by name.
 */
export const ToolHandlerProvider = typeKeyDecorator('tool-handler');

/** Tags a provider as the `GatewayExecutor` of a gateway-owned tool type. */
export const GatewayExecutorProvider = typeKeyDecorator('gateway-executor');

/**
 * Tags a provider as the `InputItemHandler` of an input item type that
 * belongs to no tool (a state module's summary of a compacted transcript).
 * `type` is the item type; it shares one key space with tools' history item
 * types, so two modules can never both answer for one item.
 */
export const InputItemProvider = typeKeyDecorator('input-item');
