import { DiscoveryService } from '@nestjs/core';

/** What every extension decorator carries: the key the explorer indexes the provider under. */
export interface TypeKey {
  type: string;
}

/**
 * Tags a provider as the `ToolHandler` of a tool type. The explorer finds
 * tagged providers at start-up and checks `type` against the instance's own
 * `type`; core never imports a tool module by name.
 */
export const ToolHandlerProvider = DiscoveryService.createDecorator<TypeKey>();

/** Tags a provider as the `GatewayExecutor` of a gateway-owned tool type. */
export const GatewayExecutorProvider = DiscoveryService.createDecorator<TypeKey>();

/**
 * Tags a provider as the `InputItemHandler` of an input item type that
 * belongs to no tool (a state module's summary of a compacted transcript).
 * `type` is the item type; it shares one key space with tools' history item
 * types, so two modules can never both answer for one item.
 */
export const InputItemProvider = DiscoveryService.createDecorator<TypeKey>();
