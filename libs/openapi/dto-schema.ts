import { getMetadataStorage } from 'class-validator';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1), as plain data. */
export type JsonSchema = Record<string, unknown>;

interface Rule {
  name: string;
  constraints: unknown[];
  each: boolean;
}

function rulesByProperty(cls: Function): Map<string, Rule[]> {
  const byProperty = new Map<string, Rule[]>();
  for (const m of getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false)) {
    const rules = byProperty.get(m.propertyName) ?? [];
    rules.push({ name: m.name ?? m.type, constraints: m.constraints ?? [], each: m.each === true });
    byProperty.set(m.propertyName, rules);
  }
  return byProperty;
}

/** The schema of one value from its rules (those with `each` describe a list's entries). */
function valueSchema(rules: readonly Rule[], nested: () => JsonSchema | undefined): JsonSchema {
  const schema: JsonSchema = {};
  const has = (name: string) => rules.find((r) => r.name === name);
  if (has('isInt')) schema.type = 'integer';
  else if (has('isNumber')) schema.type = 'number';
  else if (has('isString') || has('isUrl') || has('matches')) schema.type = 'string';
  else if (has('isBoolean')) schema.type = 'boolean';
  else if (has('isArray')) schema.type = 'array';
  else if (has('isObject')) schema.type = 'object';
  const isIn = has('isIn');
  if (isIn) schema.enum = [...(isIn.constraints[0] as unknown[])];
  const min = has('min')?.constraints[0];
  const max = has('max')?.constraints[0];
  if (typeof min === 'number') schema.minimum = min;
  if (typeof max === 'number') schema.maximum = max;
  const maxLength = has('maxLength')?.constraints[0];
  const minLength = has('minLength')?.constraints[0];
  if (typeof maxLength === 'number') schema.maxLength = maxLength;
  if (typeof minLength === 'number') schema.minLength = minLength;
  const pattern = has('matches')?.constraints[0];
  if (pattern instanceof RegExp) schema.pattern = pattern.source;
  if (has('nestedValidation')) Object.assign(schema, nested() ?? { type: 'object' });
  return schema;
}

/**
 * The JSON Schema of a class-validator DTO, read from the same decorators
 * that validate it, so the document and the validation cannot drift apart.
 * Nested DTOs (`@ValidateNested`) are followed through their declared type.
 * `@IsOptional` fields are optional and may be null, as the validation lets them be.
 */
export function dtoSchema(cls: Function, seen = new Set<Function>()): JsonSchema {
  if (seen.has(cls)) return { type: 'object' };
  seen.add(cls);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [property, rules] of rulesByProperty(cls)) {
    const optional = rules.some((r) => r.name === 'isOptional' || r.name === 'conditionalValidation');
    const own = rules.filter((r) => !r.each);
    const entries = rules.filter((r) => r.each);
    const nested = () => {
      const type = Reflect.getMetadata('design:type', cls.prototype, property) as Function | undefined;
      return type && type !== Object && type !== Array ? dtoSchema(type, seen) : undefined;
    };
    let schema = valueSchema(own, nested);
    if (entries.length > 0) schema = { ...schema, type: 'array', items: valueSchema(entries, () => undefined) };
    if (optional && typeof schema.type === 'string') schema = { ...schema, type: [schema.type, 'null'] };
    if (optional && Array.isArray(schema.enum)) schema = { ...schema, enum: [...(schema.enum as unknown[]), null] };
    properties[property] = schema;
    if (!optional) required.push(property);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}
