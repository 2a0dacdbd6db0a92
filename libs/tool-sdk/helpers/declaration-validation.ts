import { InvalidRequestError } from '../errors.js';
import type { JsonObject } from '../items.js';

/** Field checks shared by tool handlers; every failure names the field path. */

const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function requireString(decl: JsonObject, field: string, path: string): string {
  const value = decl[field];
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidRequestError(`${path}.${field} is required and must be a non-empty string.`, `${path}.${field}`);
  }
  return value;
}

export function optionalString(decl: JsonObject, field: string, path: string): string | undefined {
  const value = decl[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new InvalidRequestError(`${path}.${field} must be a string.`, `${path}.${field}`);
  return value;
}

export function optionalBoolean(decl: JsonObject, field: string, path: string): boolean | undefined {
  const value = decl[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new InvalidRequestError(`${path}.${field} must be a boolean.`, `${path}.${field}`);
  return value;
}

export function optionalInteger(decl: JsonObject, field: string, path: string, min: number, max: number): number | undefined {
  const value = decl[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidRequestError(`${path}.${field} must be an integer from ${min} to ${max}.`, `${path}.${field}`);
  }
  return value;
}

export function optionalObject(decl: JsonObject, field: string, path: string): JsonObject | undefined {
  const value = decl[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidRequestError(`${path}.${field} must be an object.`, `${path}.${field}`);
  return value as JsonObject;
}

export function optionalStringArray(decl: JsonObject, field: string, path: string): string[] | undefined {
  const value = decl[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new InvalidRequestError(`${path}.${field} must be an array of strings.`, `${path}.${field}`);
  }
  return value as string[];
}

/** Function names as OpenAI and the common tool-call parsers accept them. */
export function requireFunctionName(decl: JsonObject, path: string): string {
  const name = requireString(decl, 'name', path);
  if (!FUNCTION_NAME.test(name)) {
    throw new InvalidRequestError(`${path}.name "${name}" must match ^[a-zA-Z0-9_-]{1,64}$.`, `${path}.name`);
  }
  return name;
}

/** A JSON Schema for parameters: an object schema, defaulting to "no parameters". */
export function parametersSchema(decl: JsonObject, path: string): JsonObject {
  const schema = optionalObject(decl, 'parameters', path);
  if (!schema) return { type: 'object', properties: {} };
  if (schema.type !== undefined && schema.type !== 'object') {
    throw new InvalidRequestError(`${path}.parameters must be a JSON Schema of type "object".`, `${path}.parameters.type`);
  }
  return schema;
}
