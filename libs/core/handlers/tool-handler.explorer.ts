import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { AnyGatewayExecutor, AnyToolHandler } from './tool-handler.interface.js';
import { GatewayExecutorProvider, ToolHandlerProvider } from './tool-handler.decorators.js';

/** Thrown at start-up when tool modules contradict each other. */
export class ToolRegistrationError extends Error {}

/**
 * Finds every provider tagged `@ToolHandlerProvider()` / `@GatewayExecutorProvider()`
 * once at start-up and indexes them by tool type, wire tag and history item type.
 * Two providers claiming one key is a configuration error, never a silent overwrite.
 */
@Injectable()
export class ToolHandlerExplorer implements OnModuleInit {
  private readonly logger = new Logger('ToolHandlerExplorer');
  private readonly handlersByType = new Map<string, AnyToolHandler>();
  private readonly handlersByWireTag = new Map<string, AnyToolHandler>();
  private readonly handlersByItemType = new Map<string, AnyToolHandler>();
  private readonly executorsByType = new Map<string, AnyGatewayExecutor>();

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders({ metadataKey: ToolHandlerProvider.KEY })) {
      const handler = wrapper.instance as AnyToolHandler | undefined;
      if (handler) this.addHandler(handler, wrapper.name);
    }
    for (const wrapper of this.discovery.getProviders({ metadataKey: GatewayExecutorProvider.KEY })) {
      const executor = wrapper.instance as AnyGatewayExecutor | undefined;
      if (executor) this.addExecutor(executor, wrapper.name);
    }
    for (const [type, executor] of this.executorsByType) {
      const handler = this.handlersByType.get(type);
      if (!handler) throw new ToolRegistrationError(`GatewayExecutor for "${type}" has no ToolHandler for that type`);
      if (!handler.gatewayOwned) {
        throw new ToolRegistrationError(`Tool type "${type}" is client-owned; it cannot have a GatewayExecutor (${executor.constructor.name})`);
      }
    }
    const roles = [...this.handlersByType.entries()].map(([type, handler]) =>
      !handler.gatewayOwned ? `${type} (client)` : this.executorsByType.has(type) ? `${type} (gateway)` : `${type} (declared only, no executor)`,
    );
    // Hosts print their own start-up summary with reasons; this is the detail behind it.
    this.logger.debug(`tool types: ${roles.join(', ')}`);
  }

  /** Registers a handler directly (used by hosts that build handlers outside DI, and by tests). */
  addHandler(handler: AnyToolHandler, source = handler.constructor.name): void {
    this.claim(this.handlersByType, handler.type, handler, `ToolHandler for type "${handler.type}"`, source);
    for (const tag of [handler.type, ...(handler.aliases ?? [])]) {
      this.claim(this.handlersByWireTag, tag, handler, `wire tag "${tag}"`, source);
    }
    for (const itemType of handler.historyItemTypes ?? []) {
      this.claim(this.handlersByItemType, itemType, handler, `item type "${itemType}"`, source);
    }
  }

  addExecutor(executor: AnyGatewayExecutor, source = executor.constructor.name): void {
    this.claim(this.executorsByType, executor.type, executor, `GatewayExecutor for type "${executor.type}"`, source);
  }

  private claim<T>(map: Map<string, T>, key: string, value: T, what: string, source: string): void {
    const existing = map.get(key);
    if (existing && existing !== value) {
      throw new ToolRegistrationError(`${what} is claimed twice (${(existing as object).constructor.name} and ${source})`);
    }
    map.set(key, value);
  }

  handlerForWireTag(tag: string): AnyToolHandler | undefined {
    return this.handlersByWireTag.get(tag);
  }

  handlerForType(type: string): AnyToolHandler | undefined {
    return this.handlersByType.get(type);
  }

  handlerForItemType(itemType: string): AnyToolHandler | undefined {
    return this.handlersByItemType.get(itemType);
  }

  executorForType(type: string): AnyGatewayExecutor | undefined {
    return this.executorsByType.get(type);
  }

  types(): string[] {
    return [...this.handlersByType.keys()];
  }
}
