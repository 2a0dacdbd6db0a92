import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { loadedMcpSdk } from './mcp-sdk.js';

/** Distinct output schemas one connection keeps compiled; past it the cache starts over. */
const DEFAULT_MAX_SCHEMAS = 1_024;

/**
 * The SDK client's JSON Schema validator, compiling each distinct schema once.
 *
 * The SDK client compiles a validator for every tool's `outputSchema` on each
 * `tools/list`, and the gateway lists a server's tools on every request: an
 * Ajv compile per tool per request was the largest single cost of an MCP tool
 * round, and as Ajv keeps every schema object it compiled, the compiled code
 * of each listing also stayed in memory for the connection's life.
 *
 * One instance per connection, as the SDK's default is one per client, so
 * that nothing compiled for one server (or owner) is ever used for another:
 * a schema's `$id` resolves only among the schemas of its own connection.
 * Schemas are keyed by their JSON text; the SDK's own provider handles a miss,
 * so `$id` lookups behave as before. That provider is made on the first miss:
 * only an SDK client asks, so the SDK is loaded by then (see mcp-sdk.ts).
 */
export class CompiledSchemaCache implements jsonSchemaValidator {
  private inner: AjvJsonSchemaValidator | undefined;
  private readonly compiled = new Map<string, JsonSchemaValidator<unknown>>();
  /** Validators of frozen schema objects by identity (a kept listing's, see `getValidator`); emptied with `compiled`. */
  private bySchema = new WeakMap<object, JsonSchemaValidator<unknown>>();

  constructor(private readonly maxSchemas = DEFAULT_MAX_SCHEMAS) {}

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    // A kept listing's schemas are frozen and the same objects on every call: found by identity, not re-serialized.
    const known = Object.isFrozen(schema) ? this.bySchema.get(schema) : undefined;
    if (known) return known as JsonSchemaValidator<T>;
    const key = JSON.stringify(schema);
    let validator = this.compiled.get(key);
    if (!validator) {
      if (this.compiled.size >= this.maxSchemas) this.startOver();
      this.inner ??= newAjvValidator();
      validator = this.inner.getValidator<unknown>(schema);
      this.compiled.set(key, validator);
    }
    if (Object.isFrozen(schema)) this.bySchema.set(schema, validator);
    return validator as JsonSchemaValidator<T>;
  }

  /** Compiled schemas held (for tests). */
  get size(): number {
    return this.compiled.size;
  }

  /** A server whose schemas keep changing must not grow the cache without bound: a fresh Ajv drops its compiled code too. */
  private startOver(): void {
    this.compiled.clear();
    this.bySchema = new WeakMap();
    this.inner = newAjvValidator();
  }
}

function newAjvValidator(): AjvJsonSchemaValidator {
  const sdk = loadedMcpSdk();
  if (!sdk) throw new Error('CompiledSchemaCache used before the MCP SDK was loaded (loadMcpSdk)');
  return new sdk.AjvJsonSchemaValidator();
}
