import { CustomToolHandler } from '#tools/custom/custom.tool-handler.js';
import { FunctionToolHandler } from '#tools/function/function.tool-handler.js';
import { NamespaceToolHandler } from '#tools/namespace/namespace.tool-handler.js';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { AnyToolHandler } from '#tool-sdk/contract/index.js';
import type { PublicToolChoice } from '../loop/response-request.js';
import type { JsonObject } from '#tool-sdk/items.js';
import { mcpToolChoice } from '#tools/mcp/mcp.tool-handler.js';
import { firstOfferedToolChoice } from '#tool-sdk/helpers/tool-choice.js';
import { explorerWith, testConfig } from '../testing/fixtures.js';
import { resolveToolChoice } from './tool-choice.resolver.js';
import { ToolPreparationService } from './tool-preparation.service.js';
import type { ToolRegistry } from './tool-registry.js';

const fn = (name: string): JsonObject => ({ type: 'function', name, parameters: { type: 'object', properties: {} } });
const stubHandler = (type: string): AnyToolHandler => ({ type, gatewayOwned: true, validate: () => ({}), normalize: () => [], toolChoice: choices[type] });
/** The modules' own tool_choice contracts, on stand-in handlers whose entries the tests add by hand. */
const choices: Record<string, AnyToolHandler['toolChoice']> = {
  mcp: mcpToolChoice,
  web_search: firstOfferedToolChoice('web_search', ['web_search', 'web_search_preview', 'web_search_preview_2025_03_11', 'web_search_2025_08_26']),
};

/** A hosted type with no model-facing form: validated and routed, never offered to the model. */
const hiddenHandler: AnyToolHandler = {
  type: 'hosted_demo',
  gatewayOwned: true,
  validate: () => ({}),
  normalize: () => [{ fn: { type: 'function', name: 'hosted_demo', parameters: { type: 'object', properties: {} } }, toolName: 'hosted_demo', hidden: true }],
};

/** Adds a gateway entry by hand, as the MCP and web search modules would register them. */
function addGateway(registry: ToolRegistry, toolType: string, modelName: string, toolName: string, serverLabel?: string): void {
  registry.add(
    { modelName, toolType, toolName, scope: serverLabel, ownership: { kind: 'gateway' }, handler: stubHandler(toolType), declarationIndex: 9, offered: true },
    { type: 'function', name: modelName, parameters: { type: 'object', properties: {} } },
  );
}

const explorer = explorerWith([new FunctionToolHandler(), new CustomToolHandler(), new NamespaceToolHandler(), hiddenHandler]);

async function registryOf(tools: JsonObject[]): Promise<ToolRegistry> {
  return new ToolPreparationService(explorer, testConfig()).prepare(tools, { history: [], signal: new AbortController().signal, requestId: 'r' });
}

function rejects(choice: unknown, registry: ToolRegistry): InvalidRequestError {
  try {
    resolveToolChoice(choice as PublicToolChoice, registry, explorer);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequestError);
    return err as InvalidRequestError;
  }
  throw new Error(`expected ${JSON.stringify(choice)} to be rejected`);
}

describe('resolveToolChoice', () => {
  let registry: ToolRegistry;
  const offeredNames = () => registry.functions.map((f) => f.name);

  beforeEach(async () => {
    registry = await registryOf([
      fn('run_shell'),
      { type: 'custom', name: 'apply_patch' },
      { type: 'namespace', name: 'files', tools: [fn('read'), { type: 'custom', name: 'write' }] },
      { type: 'namespace', name: 'notes', tools: [fn('list'), fn('open')] },
      { type: 'namespace', name: 'web', tools: [fn('open')] },
      { type: 'hosted_demo' },
    ]);
    addGateway(registry, 'mcp', 'docs__search', 'search', 'docs');
    addGateway(registry, 'mcp', 'docs__fetch', 'fetch', 'docs');
    addGateway(registry, 'mcp', 'db__query', 'query', 'db');
    addGateway(registry, 'web_search', 'web_search', 'web_search');
  });

  describe('string forms', () => {
    it('passes auto and none through without forcing', () => {
      for (const choice of ['auto', 'none'] as const) {
        const resolved = resolveToolChoice(choice, registry, explorer);
        expect(resolved).toEqual({ choice, tools: registry.functions, forcing: false });
      }
    });

    it('marks required as forcing', () => {
      expect(resolveToolChoice('required', registry, explorer)).toMatchObject({ choice: 'required', forcing: true });
    });

    it('offers only what the model may call (hidden tools stay out)', () => {
      expect(offeredNames()).not.toContain('hosted_demo');
      expect(resolveToolChoice('auto', registry, explorer).tools.map((f) => f.name)).toEqual(offeredNames());
    });

    it('rejects required when nothing can be called', async () => {
      const onlyHidden = await registryOf([{ type: 'hosted_demo' }]);
      expect(rejects('required', onlyHidden).param).toBe('tool_choice');
      expect(resolveToolChoice('auto', onlyHidden, explorer)).toMatchObject({ choice: 'auto', tools: [], forcing: false });
    });
  });

  describe('named forms', () => {
    it('forces a plain function by name', () => {
      expect(resolveToolChoice({ type: 'function', name: 'run_shell' }, registry, explorer)).toEqual({
        choice: { type: 'function', name: 'run_shell' },
        tools: registry.functions,
        forcing: true,
      });
    });

    it('forces a custom tool by its name', () => {
      expect(resolveToolChoice({ type: 'custom', name: 'apply_patch' }, registry, explorer).choice).toEqual({ type: 'function', name: 'apply_patch' });
    });

    it('resolves a namespace member given with its namespace', () => {
      expect(resolveToolChoice({ type: 'function', name: 'open', namespace: 'web' }, registry, explorer).choice).toEqual({ type: 'function', name: 'web__open' });
      expect(resolveToolChoice({ type: 'custom', name: 'write', namespace: 'files' }, registry, explorer).choice).toEqual({ type: 'function', name: 'files__write' });
    });

    it('resolves a namespace member by its own name when that is unambiguous and of the right kind', () => {
      expect(resolveToolChoice({ type: 'function', name: 'read' }, registry, explorer).choice).toEqual({ type: 'function', name: 'files__read' });
      expect(resolveToolChoice({ type: 'custom', name: 'write' }, registry, explorer).choice).toEqual({ type: 'function', name: 'files__write' });
      expect(rejects({ type: 'function', name: 'write' }, registry).param).toBe('tool_choice.name');
    });

    it('accepts the model-visible name of a member', () => {
      expect(resolveToolChoice({ type: 'function', name: 'notes__list' }, registry, explorer).choice).toEqual({ type: 'function', name: 'notes__list' });
    });

    it('rejects an ambiguous member name and names nobody else', () => {
      expect(rejects({ type: 'function', name: 'open' }, registry).param).toBe('tool_choice.name');
    });

    it('rejects an undeclared name', () => {
      const err = rejects({ type: 'function', name: 'nope' }, registry);
      expect(err.param).toBe('tool_choice.name');
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect(rejects({ type: 'function', name: 'read', namespace: 'notes' }, registry).param).toBe('tool_choice.name');
    });
  });

  describe('mcp form', () => {
    it('with a name forces that tool of that server', () => {
      expect(resolveToolChoice({ type: 'mcp', server_label: 'docs', name: 'fetch' }, registry, explorer)).toMatchObject({
        choice: { type: 'function', name: 'docs__fetch' },
        forcing: true,
      });
    });

    it('without a name requires a call and narrows the tools to that server', () => {
      const resolved = resolveToolChoice({ type: 'mcp', server_label: 'docs' }, registry, explorer);
      expect(resolved.choice).toBe('required');
      expect(resolved.forcing).toBe(true);
      expect(resolved.tools.map((f) => f.name)).toEqual(['docs__search', 'docs__fetch']);
    });

    it('names the bad field', () => {
      expect(rejects({ type: 'mcp', server_label: 'nowhere' }, registry).param).toBe('tool_choice.server_label');
      expect(rejects({ type: 'mcp', server_label: 'db', name: 'search' }, registry).param).toBe('tool_choice.name');
    });
  });

  describe('hosted forms', () => {
    it.each(['web_search', 'web_search_preview', 'web_search_preview_2025_03_11', 'web_search_2025_08_26'])('%s forces the web search tool', (type) => {
      expect(resolveToolChoice({ type }, registry, explorer)).toMatchObject({ choice: { type: 'function', name: 'web_search' }, forcing: true });
    });

    it('rejects a hosted type that is declared but not offered, or not declared', () => {
      expect(rejects({ type: 'hosted_demo' }, registry).param).toBe('tool_choice.type');
      expect(rejects({ type: 'code_interpreter' }, registry).param).toBe('tool_choice.type');
      expect(rejects({ type: 'file_search' }, registry).param).toBe('tool_choice.type');
    });

    it('rejects a type it does not know', () => {
      expect(rejects({ type: 'telepathy' }, registry).param).toBe('tool_choice.type');
    });
  });

  describe('allowed_tools', () => {
    it('narrows the offered tools without forcing in auto mode', () => {
      const resolved = resolveToolChoice(
        {
          type: 'allowed_tools',
          mode: 'auto',
          tools: [
            { type: 'function', name: 'run_shell' },
            { type: 'mcp', server_label: 'docs' },
            { type: 'custom', name: 'write', namespace: 'files' },
          ],
        },
        registry,
        explorer,
      );
      expect(resolved.choice).toBe('auto');
      expect(resolved.forcing).toBe(false);
      expect(resolved.tools.map((f) => f.name)).toEqual(['run_shell', 'files__write', 'docs__search', 'docs__fetch']);
    });

    it('forces a call among the allowed ones in required mode', () => {
      const resolved = resolveToolChoice({ type: 'allowed_tools', mode: 'required', tools: [{ type: 'web_search_preview' }] }, registry, explorer);
      expect(resolved).toMatchObject({ choice: 'required', forcing: true });
      expect(resolved.tools.map((f) => f.name)).toEqual(['web_search']);
    });

    it('defaults to auto mode', () => {
      expect(resolveToolChoice({ type: 'allowed_tools', tools: [{ type: 'function', name: 'run_shell' }] } as never, registry, explorer)).toMatchObject({
        choice: 'auto',
        forcing: false,
      });
    });

    it('names the bad field', () => {
      expect(rejects({ type: 'allowed_tools', mode: 'auto' }, registry).param).toBe('tool_choice.tools');
      expect(rejects({ type: 'allowed_tools', mode: 'always', tools: [{ type: 'function', name: 'run_shell' }] }, registry).param).toBe('tool_choice.mode');
    });

    it('names the entry that is not an object', () => {
      expect(rejects({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'run_shell' }, 'run_shell'] }, registry).param).toBe('tool_choice.tools[1]');
      expect(rejects({ type: 'allowed_tools', mode: 'auto', tools: [null] }, registry).param).toBe('tool_choice.tools[0]');
    });

    it('names the field inside the entry that is wrong', () => {
      expect(
        rejects(
          {
            type: 'allowed_tools',
            mode: 'auto',
            tools: [
              { type: 'function', name: 'run_shell' },
              { type: 'function', name: 'nope' },
            ],
          },
          registry,
        ).param,
      ).toBe('tool_choice.tools[1].name');
      expect(rejects({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'mcp', server_label: 'nowhere' }] }, registry).param).toBe('tool_choice.tools[0].server_label');
    });
  });
});
