import type { InjectionToken, OptionalFactoryDependency, Provider, Type } from '@nestjs/common';

/**
 * How a host replaces one of the gateway's ports, in Nest's own provider
 * shapes: a class (constructed with DI), `useClass`, `useFactory` with
 * `inject`, `useValue` or `useExisting`. Whatever is given must implement the
 * port; that is checked at boot, not at the first request.
 */
export type GatewayOverride<T> =
  | Type<T>
  | { useClass: Type<T> }
  | { useFactory: (...args: any[]) => T | Promise<T>; inject?: Array<InjectionToken | OptionalFactoryDependency> }
  | { useValue: T }
  | { useExisting: InjectionToken };

/** Thrown at boot when an override cannot take effect; the message says which and why. */
export class GatewayOverrideError extends Error {
  override readonly name = 'GatewayOverrideError';
}

/** The override as a provider of `token`. */
export function overrideProvider<T>(token: InjectionToken, override: GatewayOverride<T>, name: string): Provider {
  if (typeof override === 'function') return { provide: token, useClass: override };
  if (override && typeof override === 'object') {
    if ('useClass' in override && typeof override.useClass === 'function') return { provide: token, useClass: override.useClass };
    if ('useFactory' in override && typeof override.useFactory === 'function') {
      return { provide: token, useFactory: override.useFactory, inject: override.inject ?? [] };
    }
    if ('useValue' in override) return { provide: token, useValue: override.useValue };
    if ('useExisting' in override && override.useExisting !== undefined) return { provide: token, useExisting: override.useExisting };
  }
  throw new GatewayOverrideError(`The ${name} override must be a class or { useClass | useFactory | useValue | useExisting }.`);
}

/**
 * Refuses a value that is not the port it replaces (a factory that resolved
 * to the wrong object, a class missing a method): silently keeping the
 * default, or failing the first request, would both hide the mistake.
 */
export function assertImplements<T>(value: unknown, name: string, methods: readonly string[]): T {
  const missing = value && typeof value === 'object' ? methods.filter((m) => typeof (value as Record<string, unknown>)[m] !== 'function') : [...methods];
  if (missing.length > 0) {
    const what = value === null || value === undefined ? String(value) : ((value as object).constructor?.name ?? typeof value);
    throw new GatewayOverrideError(`The ${name} override (${what}) does not implement ${missing.map((m) => `${m}()`).join(', ')}.`);
  }
  return value as T;
}

/** Releases what an override holds when it has `close()` but no Nest shutdown hook of its own (Nest calls those). */
export async function closeOverride(value: unknown): Promise<void> {
  const v = value as Partial<Record<'close' | 'onApplicationShutdown' | 'onModuleDestroy' | 'beforeApplicationShutdown', unknown>> | null;
  if (!v || typeof v !== 'object' || typeof v.close !== 'function') return;
  if (typeof v.onApplicationShutdown === 'function' || typeof v.onModuleDestroy === 'function' || typeof v.beforeApplicationShutdown === 'function') return;
  await (v.close as () => unknown).call(v);
}
