import 'reflect-metadata';
import { IsIn, IsInt, IsOptional, IsString, Max, Min, type ValidationError, validateSync } from 'class-validator';
import { gotPart, violationMessage } from '#config/validation-messages.js';
import { InvalidRequestError } from '../errors.js';
import type { JsonObject } from '../items.js';

/**
 * The one validation path of request bodies and query strings, used by every
 * route (Responses, Conversations, input_items, Files, Vector Stores,
 * Containers): a failure is a 400 `invalid_request_error` whose `param`
 * names the field, in the OpenAI error envelope. Polymorphic fields (input
 * items, tools) keep their own parsers, which throw the same error.
 */

/** The body as a JSON object; `optional` lets a route take an empty body as `{}`. */
export function requestBody(body: unknown, options: { optional?: boolean } = {}): JsonObject {
  if (body === undefined && options.optional) return {};
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new InvalidRequestError('The request body must be a JSON object.', null);
  return body as JsonObject;
}

/**
 * The first field that failed, depth first, with its dotted path
 * (`reasoning.effort`): one message saying what the field takes and what came,
 * however many of its rules the value broke (see `violationMessage`).
 */
export function firstViolation(errors: ValidationError[], prefix = ''): { param: string; message: string } | null {
  for (const e of errors) {
    const param = prefix ? `${prefix}.${e.property}` : e.property;
    if (e.constraints) {
      return { param, message: `Invalid value for '${param}': ${violationMessage(e)}${gotPart(e.value)}.` };
    }
    const nested = firstViolation(e.children ?? [], param);
    if (nested) return nested;
  }
  return null;
}

/** Checks a DTO instance (class-validator decorators); the first violation is the 400. */
export function validateFields<T extends object>(dto: T, prefix = ''): T {
  const violation = firstViolation(validateSync(dto, { forbidUnknownValues: false }), prefix);
  if (violation) throw new InvalidRequestError(violation.message, violation.param);
  return dto;
}

/** A query parameter given twice arrives as an array: refused, rather than one of them picked. */
function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new InvalidRequestError(`'${name}' must be given once, as a string.`, name);
  return value;
}

/** `limit`, `order`, `after` and `before` of the OpenAI list endpoints. */
export class ListQueryDto {
  @IsInt({ message: 'must be an integer from 1 to 100' })
  @Min(1, { message: 'must be an integer from 1 to 100' })
  @Max(100, { message: 'must be an integer from 1 to 100' })
  limit!: number;
  @IsIn(['asc', 'desc'], { message: 'must be "asc" or "desc"' }) order!: 'asc' | 'desc';
  @IsOptional() @IsString() after?: string;
  @IsOptional() @IsString() before?: string;
}

/** A list endpoint's query string, checked before any lookup so that a bad value names its parameter. */
export function listQuery(query: Record<string, unknown>, defaults: { order?: 'asc' | 'desc'; limit?: number } = {}): ListQueryDto {
  const dto = new ListQueryDto();
  const limit = single(query, 'limit');
  // Digits only: `Number('1e1')` or `Number(' 5')` would pass as integers.
  dto.limit = limit === undefined ? (defaults.limit ?? 20) : /^\d+$/.test(limit) ? Number(limit) : (limit as unknown as number);
  dto.order = (single(query, 'order') ?? defaults.order ?? 'desc') as 'asc' | 'desc';
  dto.after = single(query, 'after');
  dto.before = single(query, 'before');
  return validateFields(dto);
}
