import type { AnyToolHandler } from '#tool-sdk/contract/index.js';
import { ToolRegistry, type ToolEntry } from './tool-registry.js';

const handler: AnyToolHandler = { type: 'function', gatewayOwned: false, validate: () => ({}), normalize: () => [] };

function clientEntry(name: string): ToolEntry {
  return {
    modelName: name,
    toolType: 'function',
    toolName: name,
    ownership: { kind: 'client', shape: { kind: 'function', name } },
    handler,
    declarationIndex: 0,
    offered: true,
  };
}

const fn = (name: string) => ({ type: 'function' as const, name, parameters: { type: 'object' } });

/** Registries nothing was added to share their empty tables; each copies them on its first write. */
describe('ToolRegistry (empty tables shared until written)', () => {
  it('keeps what one registry adds out of every other, and out of registries made later', () => {
    const first = new ToolRegistry();
    const second = new ToolRegistry();
    first.add(clientEntry('lookup'), fn('lookup'));
    first.addDeclaration({ type: 'function', name: 'lookup' }, { type: 'function', name: 'lookup' });
    first.addDiscoveryItems([{ type: 'mcp_list_tools', id: 'mcpl_1' } as never]);
    const later = new ToolRegistry();
    for (const registry of [second, later]) {
      expect(registry.size).toBe(0);
      expect(registry.functions).toEqual([]);
      expect(registry.publicTools).toEqual([]);
      expect(registry.continuationTools).toEqual([]);
      expect(registry.discoveryItems).toEqual([]);
      expect(registry.has('lookup')).toBe(false);
      expect(registry.names().has('lookup')).toBe(false);
    }
    expect(first.lookup('lookup')?.modelName).toBe('lookup');
    expect(first.findClientCall('function', 'lookup')?.modelName).toBe('lookup');
    expect(first.functions.map((f) => f.name)).toEqual(['lookup']);
    expect(first.discoveryItems).toHaveLength(1);
  });

  it('seals an empty registry, and a registry over it still adds its own tools alone', () => {
    const sealed = new ToolRegistry().seal();
    expect(sealed.isSealed).toBe(true);
    expect(() => sealed.add(clientEntry('late'))).toThrow(/sealed/);
    const reader = ToolRegistry.over(sealed);
    reader.add(clientEntry('loaded'), fn('loaded'));
    expect(reader.functions.map((f) => f.name)).toEqual(['loaded']);
    expect(sealed.size).toBe(0);
    expect(new ToolRegistry().size).toBe(0);
  });

  it('still refuses to seal a registry that reads a sealed one with tools', () => {
    const declared = new ToolRegistry();
    declared.add(clientEntry('lookup'), fn('lookup'));
    const reader = ToolRegistry.over(declared.seal());
    expect(() => reader.seal()).toThrow(/cannot be sealed/);
    reader.add(clientEntry('loaded'), fn('loaded'));
    expect(declared.functions.map((f) => f.name)).toEqual(['lookup']);
    expect(reader.functions.map((f) => f.name)).toEqual(['lookup', 'loaded']);
  });
});

describe('ToolRegistry.runsGatewayTools', () => {
  const gatewayEntry = (name: string): ToolEntry => ({
    ...clientEntry(name),
    toolType: 'nap',
    ownership: { kind: 'gateway', binding: undefined } as never,
  });

  it('is false for client tools alone and true once a gateway tool is added', () => {
    const registry = new ToolRegistry();
    expect(registry.runsGatewayTools).toBe(false);
    for (let i = 0; i < 100; i++) registry.add(clientEntry(`f${i}`), fn(`f${i}`));
    expect(registry.runsGatewayTools).toBe(false);
    registry.add(gatewayEntry('nap_a'));
    expect(registry.runsGatewayTools).toBe(true);
  });

  it('follows a name registered again under the other ownership', () => {
    const registry = new ToolRegistry();
    registry.add(gatewayEntry('same'));
    registry.add(clientEntry('same'));
    expect(registry.runsGatewayTools).toBe(false);
    registry.add(gatewayEntry('same'));
    registry.add(gatewayEntry('same'));
    expect(registry.runsGatewayTools).toBe(true);
    registry.add(clientEntry('same'));
    expect(registry.runsGatewayTools).toBe(false);
  });

  it('is read through a registry over a sealed one, and a loaded gateway tool counts for the reader alone', () => {
    const declared = new ToolRegistry();
    declared.add(clientEntry('lookup'), fn('lookup'));
    const sealed = declared.seal();
    const reader = ToolRegistry.over(sealed);
    expect(reader.runsGatewayTools).toBe(false);
    reader.add(gatewayEntry('nap_a'));
    expect(reader.runsGatewayTools).toBe(true);
    expect(sealed.runsGatewayTools).toBe(false);
    expect(ToolRegistry.over(sealed).runsGatewayTools).toBe(false);
  });
});
