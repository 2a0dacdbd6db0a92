import type http from 'node:http';

/**
 * The agent with its options as an ordinary object (used by the upstream
 * transport and by tool modules' own connection pools; see bench/README.md,
 * "Why some pieces are hand-written"). Node keeps them in an object without a
 * prototype, which V8 stores as a dictionary, and `Agent#addRequest` spreads
 * them with the request's options into a new object on every request: from a
 * dictionary that copy takes V8's slow path, from an ordinary object its fast
 * one. The same own members, so every read of them (own members only, as
 * spreads read) is unchanged.
 */
export function withPlainOptions<A extends http.Agent>(agent: A): A {
  const held = agent as unknown as { options?: object };
  if (held.options) held.options = { ...held.options };
  return agent;
}
