/** The request bodies of the issue-29 ratios, shared by the CPU-time and the instruction-count benches. */
export interface RatioCase {
  name: string;
  body: string;
  /** Text every answer must contain. */
  expect: string;
  /** The pass-through proxy rather than a gateway. */
  proxy?: boolean;
  /** A framework floor (`framework-floor-child.ts`) rather than a gateway. */
  floor?: 'express' | 'nest' | 'nest-gateway-adapter';
  /**
   * A `previous_response_id` chain of this many stored responses is made on each gateway before
   * its loads, and `body` continues its last one (see `continuedBody`).
   */
  chain?: number;
}

/** Where a chain case's body names the response it continues, replaced per gateway by `continuedBody`. */
const CHAIN_HEAD = '__CHAIN_HEAD__';

/** A chain case's body continuing `head` (a response stored on the gateway the body goes to). */
export function continuedBody(c: RatioCase, head: string): string {
  return c.body.replace(CHAIN_HEAD, head);
}

export function hundredTools(): unknown[] {
  return Array.from({ length: 100 }, (_, i) => ({
    type: 'function',
    name: `tool_${i}`,
    description: `Tool number ${i}: looks a thing up by its key and returns what it found.`,
    parameters: { type: 'object', properties: { key: { type: 'string', description: 'the key' }, limit: { type: 'integer', minimum: 1 } }, required: ['key'] },
  }));
}

export function mcpToolOf(mcpUrl: string): Record<string, unknown> {
  return { type: 'mcp', server_label: 'bench', server_url: mcpUrl, require_approval: 'never' };
}

/** One round through the bench MCP server's `add` tool, then the answer. */
export function mcpRoundBody(mcpUrl: string): string {
  return JSON.stringify({ model: 'bench', input: 'add [[call bench__add {"a": 1, "b": 2}]]', tools: [mcpToolOf(mcpUrl)], store: false });
}

export function ratioCases(mcpUrl: string): RatioCase[] {
  const plain = (extra: Record<string, unknown>) => JSON.stringify({ model: 'bench', input: '[[tokens 20]]', ...extra });
  return [
    { name: 'proxy', body: plain({ store: false }), expect: '"completed"', proxy: true },
    { name: 'blocking', body: plain({ store: false }), expect: '"completed"' },
    { name: 'blocking-stored', body: plain({ store: true }), expect: '"completed"' },
    { name: 'streaming', body: plain({ store: false, stream: true }), expect: 'response.completed' },
    { name: 'streaming-stored', body: plain({ store: true, stream: true }), expect: 'response.completed' },
    // The same streamed answer through the proxy: the floor that streaming is held against.
    { name: 'proxy-streaming', body: plain({ store: false, stream: true }), expect: 'response.completed', proxy: true },
    { name: 'tools-100', body: plain({ store: false, tools: hundredTools() }), expect: '"completed"' },
    // The same bytes through the proxy: what 100 declarations cost before anyone reads them.
    { name: 'proxy-tools-100', body: plain({ store: false, tools: hundredTools() }), expect: '"completed"', proxy: true },
    { name: 'mcp-round', body: mcpRoundBody(mcpUrl), expect: '"completed"' },
  ];
}

/**
 * Continuation: a stored request continuing a chain of one stored response (against `blocking-stored`,
 * the same request with nothing before it) and of twenty (the difference over 19 is what each earlier
 * turn costs). Every request continues the same head, so the chain does not grow during a load.
 */
export function chainCases(): RatioCase[] {
  const body = JSON.stringify({ model: 'bench', input: '[[tokens 20]]', store: true, previous_response_id: CHAIN_HEAD });
  return [
    { name: 'chain-1', body, expect: '"completed"', chain: 1 },
    { name: 'chain-20', body, expect: '"completed"', chain: 20 },
  ];
}

/** The first request of a chain and each one continuing it: what `chain` responses are made of. */
export function chainTurnBody(previous: string | undefined): string {
  return JSON.stringify({ model: 'bench', input: '[[tokens 20]]', store: true, ...(previous ? { previous_response_id: previous } : {}) });
}

/**
 * The framework floors, beside the proxy: the body of the plain blocking case through express alone
 * and through Nest (on Nest's own adapter and on the gateway's), and the 100-tools body through Nest (parsed, relayed, its answer parsed and re-sent).
 */
export function floorCases(mcpUrl: string): RatioCase[] {
  const body = JSON.stringify({ model: 'bench', input: '[[tokens 20]]', store: false });
  return [
    { name: 'express-hop', body, expect: '"completed"', floor: 'express' },
    { name: 'nest-hop', body, expect: '"completed"', floor: 'nest' },
    { name: 'nest-adapter-hop', body, expect: '"completed"', floor: 'nest-gateway-adapter' },
    { name: 'nest-hop-tools-100', body: JSON.stringify({ model: 'bench', input: '[[tokens 20]]', store: false, tools: hundredTools() }), expect: '"completed"', floor: 'nest' },
    // The MCP round's exchanges alone: two model requests and one `tools/call`, through Nest.
    { name: 'nest-hop-mcp-round', body: mcpRoundBody(mcpUrl), expect: '"completed"', floor: 'nest' },
  ];
}
