import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The openai SDK's own Responses types (`resources/responses/responses.d.ts`
 * of the installed `openai` package), read with the TypeScript checker, as a
 * judge of what the gateway emits: a field the SDK marks optional (`field?:`)
 * is one OpenAI omits when it has no value, and clients with strict schemas
 * (the AI SDK's) refuse a `null` there; a field whose type has no `null` may
 * never be null. Following the installed SDK means a newer SDK judges anew.
 */
export interface ShapeViolation {
  path: string;
  why: 'null where OpenAI omits the field' | 'null where the type has no null';
}

/**
 * Fields the SDK marks optional that OpenAI's own wire sends as `null`
 * (OpenAI's MCP guide shows `"error": null, "approval_request_id": null` on
 * `mcp_call`; `file_search_call` has `"results": null` until `include` asks
 * for them), and that the strict clients accept as null (the AI SDK's
 * schemas type them `.nullish()`). Only top-level fields of the item.
 */
export const OPENAI_SENDS_NULL: Readonly<Record<string, readonly string[]>> = {
  mcp_call: ['output', 'error', 'approval_request_id'],
  file_search_call: ['results'],
};

function sdkTypesFile(): string {
  // The package's `exports` hide its files from `require.resolve`; the types sit beside its entry point.
  return fileURLToPath(new URL('../../node_modules/openai/resources/responses/responses.d.ts', import.meta.url));
}

export class OpenAiItemShapes {
  private readonly checker: ts.TypeChecker;
  /** Output item types by their `type` literal. */
  readonly items = new Map<string, ts.Type>();

  constructor() {
    const file = sdkTypesFile();
    const program = ts.createProgram([file], { strict: true, noEmit: true, skipLibCheck: true, types: [], target: ts.ScriptTarget.ES2022 });
    this.checker = program.getTypeChecker();
    const source = program.getSourceFile(file)!;
    const module = this.checker.getSymbolAtLocation(source)!;
    for (const unionName of ['ResponseOutputItem', 'ResponseItem']) {
      const alias = this.checker.getExportsOfModule(module).find((s) => s.name === unionName);
      if (!alias) throw new Error(`${unionName} is not in ${file}`);
      const union = this.checker.getDeclaredTypeOfSymbol(alias);
      for (const member of union.isUnion() ? union.types : [union]) {
        const literal = this.typeLiteral(member);
        if (literal && !this.items.has(literal)) this.items.set(literal, member);
      }
    }
  }

  /** Every violation in one public item, found by walking it beside its SDK type. */
  check(item: Record<string, unknown>, path = 'item'): ShapeViolation[] {
    const type = this.items.get(String(item.type));
    if (!type) throw new Error(`${path}: the openai SDK has no output item of type "${String(item.type)}"`);
    const found: ShapeViolation[] = [];
    this.walk(item, type, path, found);
    const sentNull = new Set((OPENAI_SENDS_NULL[String(item.type)] ?? []).map((field) => `${path}.${field}`));
    return found.filter((v) => !(v.why === 'null where OpenAI omits the field' && sentNull.has(v.path)));
  }

  private walk(value: unknown, type: ts.Type, path: string, found: ShapeViolation[]): void {
    if (value === null) {
      if (!this.allowsNull(type)) found.push({ path, why: 'null where the type has no null' });
      return;
    }
    if (value === undefined || type.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) return;
    const shape = this.pick(value, type);
    if (!shape) return;
    if (Array.isArray(value)) {
      const element = this.checker.isArrayType(shape) ? this.checker.getTypeArguments(shape as ts.TypeReference)[0] : undefined;
      if (element) value.forEach((v, i) => this.walk(v, element, `${path}[${i}]`, found));
      return;
    }
    if (typeof value !== 'object') return;
    for (const prop of this.checker.getPropertiesOfType(shape)) {
      const field = (value as Record<string, unknown>)[prop.name];
      const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
      if (field === null && optional) {
        found.push({ path: `${path}.${prop.name}`, why: 'null where OpenAI omits the field' });
        continue;
      }
      this.walk(field, this.checker.getTypeOfSymbol(prop), `${path}.${prop.name}`, found);
    }
  }

  /** The member of a union that describes `value`: by its `type` discriminator, else the only object (or array) member. */
  private pick(value: unknown, type: ts.Type): ts.Type | undefined {
    const members = (type.isUnion() ? type.types : [type]).filter((t) => !(t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)));
    if (Array.isArray(value)) return members.find((t) => this.checker.isArrayType(t));
    if (typeof value !== 'object' || value === null) return undefined;
    const objects = members.filter((t) => t.flags & ts.TypeFlags.Object && !this.checker.isArrayType(t));
    const discriminator = (value as { type?: unknown }).type;
    if (typeof discriminator === 'string') {
      const match = objects.find((t) => this.typeLiteral(t) === discriminator);
      if (match) return match;
    }
    return objects.length === 1 ? objects[0] : undefined;
  }

  private allowsNull(type: ts.Type): boolean {
    if (type.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any | ts.TypeFlags.Null)) return true;
    return type.isUnion() && type.types.some((t) => t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Unknown | ts.TypeFlags.Any));
  }

  private typeLiteral(type: ts.Type): string | undefined {
    const prop = type.getProperty?.('type');
    if (!prop) return undefined;
    const t = this.checker.getTypeOfSymbol(prop);
    return t.isStringLiteral() ? t.value : undefined;
  }
}
