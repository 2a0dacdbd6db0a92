import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { JsonObject } from '#tool-sdk/items.js';

/**
 * Field checks for Anthropic request bodies. Paths are dotted with numeric
 * segments (`messages.2.content.0.type`), as Anthropic's own errors name
 * them, and the message starts with the path.
 */

export function invalid(path: string, message: string, code = 'invalid_request'): never {
  throw new InvalidRequestError(`${path}: ${message}`, path, code);
}

export function unsupported(path: string, why: string): never {
  invalid(path, `not supported by this gateway: ${why}`, 'unsupported_parameter');
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function objectAt(value: unknown, path: string): JsonObject {
  if (!isObject(value)) invalid(path, 'must be an object.');
  return value;
}

export function arrayAt(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) invalid(path, 'must be an array.');
  return value;
}

export function stringAt(value: unknown, path: string, { nonEmpty = false } = {}): string {
  if (typeof value !== 'string') invalid(path, 'must be a string.');
  if (nonEmpty && value.length === 0) invalid(path, 'must not be empty.');
  return value;
}

export function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

export function numberAt(value: unknown, path: string, min: number, max: number, { integer = false } = {}): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value)) || value < min || value > max) {
    invalid(path, `must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}.`);
  }
  return value;
}

export function booleanAt(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') invalid(path, 'must be a boolean.');
  return value;
}

/** `system` and `tool_result.content` take a string or a list of text blocks. */
export function textOrTextBlocks(value: unknown, path: string): string[] {
  if (typeof value === 'string') return [value];
  return arrayAt(value, path).map((raw, i) => {
    const block = objectAt(raw, `${path}.${i}`);
    if (block.type !== 'text') invalid(`${path}.${i}.type`, `must be "text".`);
    return stringAt(block.text, `${path}.${i}.text`);
  });
}
