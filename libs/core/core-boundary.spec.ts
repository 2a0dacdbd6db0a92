import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Core and the tool SDK know no tool type. The rule, checked over every
 * non-spec, non-testing `.ts` file under `libs/core` and `libs/tool-sdk`:
 *
 * - No name of a concrete tool type, its items or its wire fields appears,
 *   in code or in comments (case-insensitive, as a word or the start of a
 *   snake_case word): `mcp…`, `web_search…`, `file_search…`,
 *   `code_interpreter…`, `namespace…`, `custom…`, `tool_search…`,
 *   `compaction…`, `server_label` / `serverLabel`.
 * - The contract files may name them in their documentation comments (an
 *   example helps a module author); their code is held to the rule.
 * - The model-side protocol's own words are not tool names: `function`,
 *   `function_call`, `function_call_output`, `message`, `reasoning`. The one
 *   protocol field spelled like a tool type, `FunctionCallItem.namespace`
 *   in `protocol/items.ts`, is allowed there and nowhere else.
 *
 * Whatever a built-in type needs from core is a part of the contract that
 * any module can implement (the `nap` test module proves it end to end).
 */
const CORE = dirname(fileURLToPath(import.meta.url));
const SDK = join(CORE, '..', 'tool-sdk');
const LIBS = join(CORE, '..');

const FORBIDDEN = /(?<![A-Za-z0-9])(mcp|web_?search|file_?search|code_?interpreter|namespace|custom|tool_?search|compaction|server_?label)/i;

/** Files whose documentation comments may use examples; their code may not. */
const CONTRACT_FILES = new Set([
  'tool-sdk/contract/declaration.ts',
  'tool-sdk/contract/discovery.ts',
  'tool-sdk/contract/history.ts',
  'tool-sdk/contract/tool-choice.ts',
  'tool-sdk/contract/approvals.ts',
  'tool-sdk/contract/execution.ts',
  'tool-sdk/contract/events.ts',
  'tool-sdk/contract/handler.ts',
  'tool-sdk/contract/entry.ts',
  'tool-sdk/contract/input-items.ts',
  'tool-sdk/decorators.ts',
  'tool-sdk/index.ts',
  'tool-sdk/tool-type.ts',
  'tool-sdk/ports/tool-storage.ts',
  'tool-sdk/ports/container-records.ts',
  'tool-sdk/routes/gateway-routes.ts',
]);

/** The protocol field named like a tool type, by file and exact line text. */
const PROTOCOL_FIELDS: Array<{ file: string; line: string }> = [{ file: 'tool-sdk/items.ts', line: 'namespace?: string | null;' }];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Comments blanked out, line structure kept, so that hits keep their line numbers. */
export function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, (block) => block.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

export function violations(file: string, source: string): string[] {
  const text = CONTRACT_FILES.has(file) ? withoutComments(source) : source;
  return text.split('\n').flatMap((line, i) => {
    const hit = FORBIDDEN.exec(line);
    if (!hit) return [];
    if (PROTOCOL_FIELDS.some((field) => field.file === file && line.trim() === field.line)) return [];
    return [`${file}:${i + 1}: "${hit[0]}" in: ${line.trim()}`];
  });
}

describe('core boundary', () => {
  it('no file under libs/core names a concrete tool type, item type or wire field', () => {
    const files = [...sourceFiles(CORE), ...sourceFiles(SDK)];
    // The walk itself must see the loop, the registry and the contract, or the check proves nothing.
    expect(files.map((f) => relative(LIBS, f))).toEqual(
      expect.arrayContaining(['core/loop/loop.service.ts', 'core/loop/history-to-model.ts', 'core/registry/tool-choice.resolver.ts', 'tool-sdk/contract/handler.ts']),
    );
    const found = files.flatMap((path) => violations(relative(LIBS, path), readFileSync(path, 'utf8')));
    expect(found).toEqual([]);
  });

  describe('the rule itself', () => {
    it('flags a type check, an item type and a field in code', () => {
      expect(violations('core/loop/x.ts', "if (handler.type === 'mcp') return;")).toHaveLength(1);
      expect(violations('core/loop/x.ts', "const t = 'mcp_approval_response';")).toHaveLength(1);
      expect(violations('core/loop/x.ts', 'entry.serverLabel')).toHaveLength(1);
      expect(violations('core/loop/x.ts', "kind: 'custom_tool_call'")).toHaveLength(1);
      expect(violations('core/loop/x.ts', "{ type: 'web_search_preview' }")).toHaveLength(1);
    });

    it('flags comments outside the contract, and code inside it', () => {
      expect(violations('core/loop/x.ts', '// answers MCP approvals')).toHaveLength(1);
      expect(violations('tool-sdk/contract/handler.ts', '/** e.g. MCP `tools/list` */')).toEqual([]);
      expect(violations('tool-sdk/contract/handler.ts', "readonly kind: 'tool_search_call';")).toHaveLength(1);
    });

    it('lets the model protocol words through, and the one protocol field only where it is declared', () => {
      expect(violations('core/loop/x.ts', "{ type: 'function_call_output', call_id }")).toEqual([]);
      expect(violations('tool-sdk/items.ts', '  namespace?: string | null;')).toEqual([]);
      expect(violations('core/loop/x.ts', '  namespace?: string | null;')).toHaveLength(1);
    });

    it('matches at the start of a word, not inside one', () => {
      expect(violations('core/loop/x.ts', 'const customer = 1; // a nonmcp thing')).toHaveLength(1);
      expect(violations('core/loop/x.ts', 'const xmcp = 1;')).toEqual([]);
    });
  });
});
