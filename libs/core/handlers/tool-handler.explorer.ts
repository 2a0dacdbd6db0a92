import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import type { InputItemHandler } from '#tool-sdk/contract/input-items.js';
import type { AnyGatewayExecutor, AnyToolHandler, GatewayExecutor, ToolHandler } from '#tool-sdk/contract/index.js';
import { completeExecutor, completeHandler } from './contract-defaults.js';
import { GatewayExecutorProvider, InputItemProvider, ToolHandlerProvider, type TypeKeyDecorator, taggedType } from '#tool-sdk/decorators.js';

/** Thrown at start-up when tool modules contradict each other. */
export class ToolRegistrationError extends Error {}

/** Providers built outside DI (unit tests of the stages that only read the explorer). */
export interface ExplorerContents {
  handlers?: readonly ToolHandler<any, any, any>[];
  executors?: readonly GatewayExecutor<any>[];
  inputItems?: readonly InputItemHandler[];
}

/**
 * Finds every provider tagged `@ToolHandlerProvider()`, `@GatewayExecutorProvider()`
 * or `@InputItemProvider()` once at start-up and indexes them by tool type,
 * wire tag, tool_choice type and item type. Two providers claiming one key
 * is a configuration error, never a silent overwrite; so is a decorator
 * whose `type` contradicts its instance, and a request-scoped provider (the
 * index is built once, so such a provider could never be reached).
 */
@Injectable()
export class ToolHandlerExplorer implements OnModuleInit {
  private readonly logger = new Logger('ToolHandlerExplorer');
  private readonly handlersByType = new Map<string, AnyToolHandler>();
  /** `callOutputTypes()`, made once the handlers are known; a handler added later drops it. */
  private outputTypes: ReadonlySet<string> | undefined;
  private readonly handlersByWireTag = new Map<string, AnyToolHandler>();
  private readonly handlersByChoiceType = new Map<string, AnyToolHandler>();
  /** Tools' history items, their approval answers and other modules' input items: one key space. */
  private readonly ownersByItemType = new Map<string, AnyToolHandler | InputItemHandler>();
  private readonly executorsByType = new Map<string, AnyGatewayExecutor>();

  constructor(private readonly discovery: DiscoveryService) {}

  /** An explorer over providers built by hand, checked exactly as at boot. */
  static of(contents: ExplorerContents): ToolHandlerExplorer {
    const explorer = new ToolHandlerExplorer(undefined as unknown as DiscoveryService);
    const named = <T extends object>(list: readonly T[] | undefined): Array<[T, string]> => (list ?? []).map((p) => [p, p.constructor.name]);
    explorer.register(named(contents.handlers), named(contents.executors), named(contents.inputItems));
    return explorer;
  }

  onModuleInit(): void {
    this.register(
      this.tagged<ToolHandler<any, any, any>>(ToolHandlerProvider, 'ToolHandlerProvider', (h) => h.type),
      this.tagged<GatewayExecutor<any>>(GatewayExecutorProvider, 'GatewayExecutorProvider', (e) => e.type),
      this.tagged<InputItemHandler>(InputItemProvider, 'InputItemProvider', (i) => i.itemType),
    );
    this.refuseUntagged();
    const roles = [...this.handlersByType.entries()].map(([type, handler]) =>
      !handler.gatewayOwned ? `${type} (client)` : this.executorsByType.has(type) ? `${type} (gateway)` : `${type} (declared only, no executor)`,
    );
    // Hosts print their own start-up summary with reasons; this is the detail behind it.
    this.logger.debug(`tool types: ${roles.join(', ')}`);
  }

  /**
   * Indexes the providers, each completed with the contract's defaults
   * first (a handler's from its executor, read before the executor's own
   * are filled in), so every later reader sees whole objects.
   */
  private register(handlers: Array<[ToolHandler<any, any, any>, string]>, executors: Array<[GatewayExecutor<any>, string]>, inputItems: Array<[InputItemHandler, string]>): void {
    const executorOf = new Map(executors.map(([executor]) => [String(executor.type), executor]));
    for (const [handler, name] of handlers) this.addHandler(completeHandler(handler, executorOf.get(handler.type)), name);
    for (const [executor, name] of executors) this.addExecutor(completeExecutor(executor), name);
    for (const [item, name] of inputItems) this.addInputItem(item, name);
    this.checkPairs();
  }

  /** Tagged providers with their instances, after checking the decorator's key against each instance. */
  private tagged<T>(decorator: TypeKeyDecorator, label: string, keyOf: (instance: T) => string): Array<[T, string]> {
    // Every provider is read, not Nest's index of decorated classes: a plugin's
    // copy of this package and of Nest keeps its own such index.
    const tagged = this.discovery.getProviders().filter((wrapper) => tagOf(decorator, wrapper) !== undefined);
    return tagged.map((wrapper: InstanceWrapper) => {
      const name = String(wrapper.name);
      if (!wrapper.isDependencyTreeStatic()) {
        throw new ToolRegistrationError(
          `${name} is tagged @${label} but is request-scoped (or depends on a request-scoped provider); extension providers are indexed once at start-up and must be singletons.`,
        );
      }
      const instance = wrapper.instance as T | undefined;
      if (!instance) throw new ToolRegistrationError(`${name} is tagged @${label} but Nest built no instance of it.`);
      const key = tagOf(decorator, wrapper)?.type;
      if (typeof key !== 'string' || key.length === 0) throw new ToolRegistrationError(`${name} is tagged @${label}() without a type: write @${label}({ type: '...' }).`);
      const own = keyOf(instance);
      if (own !== key) throw new ToolRegistrationError(`${name} is tagged @${label}({ type: "${key}" }) but its instance says "${own}".`);
      return [instance, name];
    });
  }

  /**
   * A provider shaped like a handler or an executor but without its
   * decorator would never be indexed: its type's declarations would be
   * refused or skipped with nothing saying why. Refused at boot instead.
   */
  private refuseUntagged(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || typeof instance.type !== 'string') continue;
      const name = String(wrapper.name);
      const handlerShaped = typeof instance.validate === 'function' && typeof instance.normalize === 'function';
      if (handlerShaped && tagOf(ToolHandlerProvider, wrapper) === undefined) {
        throw new ToolRegistrationError(
          `${name} is shaped like a ToolHandler for "${instance.type}" but is not tagged: add @ToolHandlerProvider({ type: '${instance.type}' }), or its declarations would find no handler.`,
        );
      }
      const executorShaped = !handlerShaped && typeof instance.execute === 'function';
      if (executorShaped && tagOf(GatewayExecutorProvider, wrapper) === undefined) {
        throw new ToolRegistrationError(
          `${name} is shaped like a GatewayExecutor for "${instance.type}" but is not tagged: add @GatewayExecutorProvider({ type: '${instance.type}' }), or its calls would never run.`,
        );
      }
    }
  }

  private checkPairs(): void {
    for (const [type, executor] of this.executorsByType) {
      const handler = this.handlersByType.get(type);
      if (!handler) throw new ToolRegistrationError(`GatewayExecutor for "${type}" has no ToolHandler for that type`);
      if (!handler.gatewayOwned) {
        throw new ToolRegistrationError(`Tool type "${type}" is client-owned; it cannot have a GatewayExecutor (${executor.constructor.name})`);
      }
    }
  }

  private addHandler(handler: AnyToolHandler, source: string): void {
    this.outputTypes = undefined;
    this.claim(this.handlersByType, handler.type, handler, `ToolHandler for type "${handler.type}"`, source);
    for (const tag of [handler.type, ...(handler.aliases ?? [])]) {
      this.claim(this.handlersByWireTag, tag, handler, `wire tag "${tag}"`, source);
    }
    for (const choiceType of handler.toolChoice?.types ?? []) {
      this.claim(this.handlersByChoiceType, choiceType, handler, `tool_choice type "${choiceType}"`, source);
    }
    for (const itemType of [...(handler.historyItemTypes ?? []), ...(handler.approvals?.answerItemTypes ?? [])]) {
      this.claim(this.ownersByItemType, itemType, handler, `item type "${itemType}"`, source);
    }
  }

  private addExecutor(executor: AnyGatewayExecutor, source: string): void {
    this.claim(this.executorsByType, executor.type, executor, `GatewayExecutor for type "${executor.type}"`, source);
  }

  private addInputItem(item: InputItemHandler, source: string): void {
    this.claim(this.ownersByItemType, item.itemType, item, `item type "${item.itemType}"`, source);
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

  /** The handler that resolves `tool_choice: {type}` objects of this type. */
  handlerForChoiceType(choiceType: string): AnyToolHandler | undefined {
    return this.handlersByChoiceType.get(choiceType);
  }

  /** The tool whose history items (or approval answers) include this type. */
  handlerForItemType(itemType: string): AnyToolHandler | undefined {
    const owner = this.ownersByItemType.get(itemType);
    return owner && isToolHandler(owner) ? owner : undefined;
  }

  /** The non-tool module that owns this input item type. */
  inputItemHandler(itemType: string): InputItemHandler | undefined {
    const owner = this.ownersByItemType.get(itemType);
    return owner && !isToolHandler(owner) ? owner : undefined;
  }

  /** Input item types that answer a call by `call_id`: the model protocol's own and every tool's. */
  callOutputTypes(): ReadonlySet<string> {
    // Asked on every request; the handlers change only as they are added.
    if (!this.outputTypes) {
      const types = new Set(['function_call_output']);
      for (const handler of this.handlersByType.values()) for (const type of handler.callOutputItemTypes ?? []) types.add(type);
      this.outputTypes = types;
    }
    return this.outputTypes;
  }

  executorForType(type: string): AnyGatewayExecutor | undefined {
    return this.executorsByType.get(type);
  }

  types(): string[] {
    return [...this.handlersByType.keys()];
  }
}

/** The decorator's metadata on a provider's class (a class provider's, or the built instance's). */
function tagOf(decorator: TypeKeyDecorator, wrapper: InstanceWrapper): { type?: unknown } | undefined {
  const instance = wrapper.instance as object | undefined;
  return taggedType(decorator, wrapper.metatype) ?? (instance ? taggedType(decorator, instance.constructor) : undefined);
}

function isToolHandler(owner: AnyToolHandler | InputItemHandler): owner is AnyToolHandler {
  return typeof (owner as AnyToolHandler).validate === 'function' && typeof (owner as AnyToolHandler).normalize === 'function';
}
